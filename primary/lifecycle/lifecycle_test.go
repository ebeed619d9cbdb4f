package lifecycle

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestStopsRunByPhaseThenInReverseConstruction(t *testing.T) {
	var s Stops
	var ran []string
	add := func(phase Phase, name string) {
		s.Add(phase, name, func(context.Context) error { ran = append(ran, name); return nil })
	}
	add(State, "store")
	add(Work, "shells")
	add(Connections, "workers")
	add(Work, "responses")
	add(Work, "jobs")
	add(Connections, "toolhosts")
	add(Intake, "continuations")
	add(Servers, "grpc")
	add(Unready, "readiness")
	add(Servers, "http")
	add(Intake, "event watches")
	want := []string{"readiness", "event watches", "continuations", "jobs", "responses", "shells", "toolhosts", "workers", "http", "grpc", "store"}
	if got := s.Order(); !slices.Equal(got, want) {
		t.Fatalf("Order %q\nwant     %q", got, want)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, want) {
		t.Fatalf("ran %q\nwant %q", ran, want)
	}
	if err := s.Stop(context.Background()); err != nil || len(ran) != len(want) {
		t.Fatalf("a second Stop ran again (%v): %q", err, ran)
	}
}

func TestAFailingStopDoesNotKeepTheOthersFromRunning(t *testing.T) {
	var s Stops
	var ran []string
	s.Add(State, "store", func(context.Context) error { ran = append(ran, "store"); return nil })
	s.Add(Work, "jobs", func(context.Context) error { ran = append(ran, "jobs"); return errors.New("jobs stuck") })
	err := s.Stop(context.Background())
	if err == nil || err.Error() != "stop jobs: jobs stuck" {
		t.Fatalf("Stop: %v, want the failure naming its component", err)
	}
	if !slices.Equal(ran, []string{"jobs", "store"}) {
		t.Fatalf("ran %q", ran)
	}
}

func TestPhaseNames(t *testing.T) {
	for phase, want := range map[Phase]string{Unready: "unready", Intake: "intake", Work: "work", Connections: "connections", Servers: "servers", State: "state", phases: "Phase(6)"} {
		if got := phase.String(); got != want {
			t.Errorf("%d: %q, want %q", int(phase), got, want)
		}
	}
}
