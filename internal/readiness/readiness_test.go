package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func grpcStatus(t *testing.T, hs *health.Server) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := hs.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStatus()
}

func readyz(t *testing.T, c *Checker) (int, verdict) {
	t.Helper()
	rec := httptest.NewRecorder()
	c.Readyz().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ReadyzPath, nil))
	var v verdict
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	return rec.Code, v
}

func TestReadiness(t *testing.T) {
	serving := NewFlag("the listeners are not serving")
	storeErr := errors.New("database is locked")
	var storeDown bool
	store := Check{Name: "store", Probe: func(context.Context) error {
		if storeDown {
			return storeErr
		}
		return nil
	}}
	hs := health.NewServer()
	c := New(hs, serving.Check("listeners"), store)

	t.Run("NotServingBeforeTheFirstVerdict", func(t *testing.T) {
		if s := grpcStatus(t, hs); s != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("gRPC status %v", s)
		}
	})
	t.Run("AClearFlagIsNamedIn503", func(t *testing.T) {
		code, v := readyz(t, c)
		if code != http.StatusServiceUnavailable || len(v.Failing) != 1 || v.Failing[0].Check != "listeners" {
			t.Fatalf("%d %+v", code, v)
		}
	})
	t.Run("EveryCheckPassingIs200AndServing", func(t *testing.T) {
		serving.Set()
		code, v := readyz(t, c)
		if code != http.StatusOK || v.Status != "ready" || v.Failing == nil || len(v.Failing) != 0 {
			t.Fatalf("%d %+v", code, v)
		}
		if s := grpcStatus(t, hs); s != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("gRPC status %v", s)
		}
	})
	t.Run("AFailingProbeFlipsGRPCOnRefresh", func(t *testing.T) {
		storeDown = true
		c.Refresh(context.Background())
		if s := grpcStatus(t, hs); s != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("gRPC status %v", s)
		}
		code, v := readyz(t, c)
		if code != http.StatusServiceUnavailable || v.Failing[0] != (Failure{"store", storeErr.Error()}) {
			t.Fatalf("%d %+v", code, v)
		}
		storeDown = false
		c.Refresh(context.Background())
	})
	t.Run("ShutdownIsNotReadyForGood", func(t *testing.T) {
		c.Shutdown()
		code, v := readyz(t, c)
		if code != http.StatusServiceUnavailable || v.Failing[0].Check != ShuttingDown {
			t.Fatalf("%d %+v", code, v)
		}
		c.Refresh(context.Background())
		if s := grpcStatus(t, hs); s != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("gRPC status %v after shutdown", s)
		}
	})
	t.Run("HealthzStaysAlive", func(t *testing.T) {
		rec := httptest.NewRecorder()
		Healthz().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, HealthzPath, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("healthz %d", rec.Code)
		}
	})
}

func TestANoteIsReportedWhateverTheVerdict(t *testing.T) {
	for _, failing := range []bool{false, true} {
		c := New(nil, Check{Name: "x", Probe: func(context.Context) error {
			if failing {
				return errors.New("down")
			}
			return nil
		}})
		c.Note("isolation", "shells are NOT isolated")
		rec := httptest.NewRecorder()
		c.Readyz().ServeHTTP(rec, httptest.NewRequest("GET", ReadyzPath, nil))
		var body struct {
			Notes map[string]string `json:"notes"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Notes["isolation"] != "shells are NOT isolated" {
			t.Fatalf("failing %v: %s (%v)", failing, rec.Body, err)
		}
	}
}
