package response

import (
	"testing"
	"time"

	"github.com/turncli/turncli/internal/clock/clocktest"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/grant"
)

// TestGrantLifetimes: a turn's grant dies at 24 hours, however the runtime asks; a response
// serving a background job keeps its grant for the job's whole lifetime and loses it the
// moment it closes.
func TestGrantLifetimes(t *testing.T) {
	clock := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewManager(Config{Registry: catalog.NewRegistry(), Clock: clock})
	spec := Spec{Agent: "tester"}

	t.Run("RuntimeCannotAskForMoreThan24Hours", func(t *testing.T) {
		s := spec
		s.GrantLifetime = grant.MaxLifetime + time.Nanosecond
		if _, err := m.Open(s); err == nil {
			t.Error("a 24h+1ns grant_lifetime was accepted")
		}
		s.GrantLifetime = grant.MaxLifetime
		r, err := m.Open(s)
		if err != nil {
			t.Fatalf("a 24h grant_lifetime: %v", err)
		}
		defer r.Close()
		if _, ok := m.Authenticate(r.token, LocalPath); !ok {
			t.Fatal("a fresh grant does not authenticate")
		}
		clock.Advance(grant.MaxLifetime - time.Nanosecond)
		if _, ok := m.Authenticate(r.token, LocalPath); !ok {
			t.Error("the grant died before 24 hours")
		}
		clock.Advance(time.Nanosecond)
		if _, ok := m.Authenticate(r.token, LocalPath); ok {
			t.Error("the grant lives at 24 hours")
		}
	})

	t.Run("BackgroundJobKeepsItsGrantForItsLifetime", func(t *testing.T) {
		const week = 7*24*time.Hour + 2*time.Second
		r, err := m.Open(spec, ForBackgroundJob(week))
		if err != nil {
			t.Fatal(err)
		}
		opened := clock.Now()
		for _, at := range []time.Duration{25 * time.Hour, 6 * 24 * time.Hour, week - time.Nanosecond} {
			clock.Advance(opened.Add(at).Sub(clock.Now()))
			if _, ok := m.Authenticate(r.token, LocalPath); !ok {
				t.Fatalf("the job's grant died %v after it was minted, before its lifetime", at)
			}
		}
		r.Close()
		if _, ok := m.Authenticate(r.token, LocalPath); ok {
			t.Error("the grant outlived the response that closed when its job ended")
		}
	})

	t.Run("BackgroundJobGrantDiesAtItsLifetime", func(t *testing.T) {
		r, err := m.Open(spec, ForBackgroundJob(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		clock.Advance(48 * time.Hour)
		if _, ok := m.Authenticate(r.token, LocalPath); ok {
			t.Error("the job's grant outlived its lifetime")
		}
	})
}
