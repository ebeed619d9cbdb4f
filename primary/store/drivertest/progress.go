package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/turncli/turncli/primary/store"
)

// snapshot is a snapshot of response id in thread with one step titled step.
func snapshot(id, thread, step string) store.ProgressSnapshot {
	return store.ProgressSnapshot{
		ResponseID: id, Channel: "room", Thread: thread, Agent: "coder", Requester: "@alice", Title: "Plan of " + id,
		Steps: json.RawMessage(`[{"id":"a","title":"` + step + `","status":"in_progress","details":"","output":"","sources":[]}]`),
	}
}

func (cf conformance) testProgress(t *testing.T) {
	ctx := context.Background()
	list := func(t *testing.T, s store.Store, f store.ProgressFilter) []store.ProgressSnapshot {
		t.Helper()
		ps, err := s.ListProgress(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}

	t.Run("ASnapshotIsReadBackWithTheStoresClockWhenItHasNoTime", func(t *testing.T) {
		s := cf.open(t, nil, &clock{t: t0})
		p := snapshot("r1", "t1", "Build")
		if err := s.SaveProgress(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.UpdatedAt = t0
		if got := list(t, s, store.ProgressFilter{}); !reflect.DeepEqual(got, []store.ProgressSnapshot{p}) {
			t.Fatalf("got %+v, want %+v", got, p)
		}
	})

	t.Run("ANewSnapshotReplacesTheResponsesPreviousOne", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		first := snapshot("r1", "t1", "Build")
		first.UpdatedAt = t0
		second := snapshot("r1", "t1", "Test")
		second.Title, second.UpdatedAt = "Renamed", t0.Add(time.Second)
		for _, p := range []store.ProgressSnapshot{first, second} {
			if err := s.SaveProgress(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if got := list(t, s, store.ProgressFilter{}); !reflect.DeepEqual(got, []store.ProgressSnapshot{second}) {
			t.Fatalf("got %+v, want only %+v", got, second)
		}
	})

	t.Run("SnapshotsListMostRecentlyUpdatedFirstAndFiltered", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		save := func(id, thread string, at time.Duration) {
			p := snapshot(id, thread, "Step")
			p.UpdatedAt = t0.Add(at)
			if err := s.SaveProgress(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		save("r1", "t1", 1*time.Second)
		save("r2", "t2", 2*time.Second)
		save("r3", "", 3*time.Second)
		save("r1", "t1", 4*time.Second) // r1 reports again: now the newest
		ids := func(f store.ProgressFilter) []string {
			out := []string{}
			for _, p := range list(t, s, f) {
				out = append(out, p.ResponseID)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			f    store.ProgressFilter
			want []string
		}{
			{"Everything", store.ProgressFilter{}, []string{"r1", "r3", "r2"}},
			{"ByResponse", store.ProgressFilter{ResponseID: "r2"}, []string{"r2"}},
			{"ByConversation", store.ProgressFilter{Channel: "room", Thread: "t1"}, []string{"r1"}},
			{"ByMainTimeline", store.ProgressFilter{Channel: "room"}, []string{"r3"}},
			{"ThreadWithoutChannelMatchesAll", store.ProgressFilter{Thread: "t2"}, []string{"r1", "r3", "r2"}},
			{"Limited", store.ProgressFilter{Limit: 2}, []string{"r1", "r3"}},
			{"OtherChannel", store.ProgressFilter{Channel: "hall", Thread: "t1"}, []string{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := ids(tc.f); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
	})

	t.Run("InvalidSnapshotsAndFiltersAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, change := range map[string]func(*store.ProgressSnapshot){
			"noResponse":     func(p *store.ProgressSnapshot) { p.ResponseID = "" },
			"noChannel":      func(p *store.ProgressSnapshot) { p.Channel = "" },
			"noTitle":        func(p *store.ProgressSnapshot) { p.Title = "" },
			"noSteps":        func(p *store.ProgressSnapshot) { p.Steps = nil },
			"emptySteps":     func(p *store.ProgressSnapshot) { p.Steps = json.RawMessage(`[]`) },
			"stepsNotArray":  func(p *store.ProgressSnapshot) { p.Steps = json.RawMessage(`{"a":1}`) },
			"stepsNotJSON":   func(p *store.ProgressSnapshot) { p.Steps = json.RawMessage(`[{]`) },
			"stepsTwoValues": func(p *store.ProgressSnapshot) { p.Steps = json.RawMessage(`[1] [2]`) },
		} {
			p := snapshot("r1", "t1", "Step")
			change(&p)
			if err := s.SaveProgress(ctx, p); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if got := list(t, s, store.ProgressFilter{}); len(got) != 0 {
			t.Fatalf("%d snapshots saved", len(got))
		}
		for _, f := range []store.ProgressFilter{{Limit: -1}, {Limit: 1001}} {
			if _, err := s.ListProgress(ctx, f); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%+v: %v, want ErrInvalid", f, err)
			}
		}
	})
}
