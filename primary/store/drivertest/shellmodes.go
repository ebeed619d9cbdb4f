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

func (cf conformance) testShellModes(t *testing.T) {
	ctx := context.Background()
	subject := store.ShellModeSubject("room", "t", "code")

	t.Run("AnAgentNeverSetIsStandard", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		m, err := s.ShellMode(ctx, "room", "t", "code")
		if err != nil || m != (store.ShellModeSetting{Mode: store.ShellModeStandard}) {
			t.Fatalf("mode %+v, %v", m, err)
		}
	})

	t.Run("SettingAModeIsReadBackPerAgentWithItsAuditEntry", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		set, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "", "admin-1")
		if err != nil {
			t.Fatal(err)
		}
		want := store.ShellModeSetting{Mode: store.ShellModeMinimal, UpdatedAt: t0, UpdatedBy: "admin-1"}
		if got, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || got != want || set != want {
			t.Fatalf("mode %+v (returned %+v), %v; want %+v", got, set, err, want)
		}
		for _, other := range [][3]string{{"room", "t", "other-agent"}, {"room", "", "code"}, {"hall", "t", "code"}} {
			if m, _ := s.ShellMode(ctx, other[0], other[1], other[2]); m.Mode != store.ShellModeStandard {
				t.Fatalf("%v changed too: %+v", other, m)
			}
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Subject: subject})
		if err != nil || len(entries) != 1 {
			t.Fatalf("audit %+v, %v", entries, err)
		}
		var detail map[string]string
		if err := json.Unmarshal(entries[0].Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if e := entries[0]; e.Actor != "admin-1" || e.Action != store.ActionShellModeSet || !e.At.Equal(t0) ||
			!reflect.DeepEqual(detail, map[string]string{"channel": "room", "thread": "t", "agent": "code", "mode": "minimal", "worker_key": "", "previous": "standard"}) {
			t.Fatalf("audit entry %+v, detail %v", e, detail)
		}
	})

	t.Run("TheModeKeepsThePlacementItWasSetFor", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		set, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "key-a", "admin-1")
		if err != nil {
			t.Fatal(err)
		}
		want := store.ShellModeSetting{Mode: store.ShellModeMinimal, WorkerKey: "key-a", UpdatedAt: t0, UpdatedBy: "admin-1"}
		if got, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || got != want || set != want {
			t.Fatalf("mode %+v (returned %+v), %v; want %+v", got, set, err, want)
		}
		if !want.AppliesTo("key-a") || want.AppliesTo("") || want.AppliesTo("key-b") {
			t.Errorf("a minimal mode set for key-a applies to key-a %v, local shells %v, key-b %v; want only key-a",
				want.AppliesTo("key-a"), want.AppliesTo(""), want.AppliesTo("key-b"))
		}
		// Setting it again for the primary's own shells moves it there.
		if _, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "", "admin-1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || got.WorkerKey != "" || got.Unplaced || !got.AppliesTo("") || got.AppliesTo("key-a") {
			t.Fatalf("mode set again for local shells: %+v, %v", got, err)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Subject: subject})
		if err != nil || len(entries) != 2 {
			t.Fatalf("audit %+v, %v", entries, err)
		}
		var detail map[string]string
		if err := json.Unmarshal(entries[1].Detail, &detail); err != nil || detail["worker_key"] != "key-a" {
			t.Fatalf("the first entry's detail %v (%v) does not name worker key key-a", detail, err)
		}
	})

	t.Run("ResetForgetsTheModeAndIsAudited", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		if _, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "", "admin-1"); err != nil {
			t.Fatal(err)
		}
		clk.Set(t0.Add(time.Minute))
		reset, err := s.ResetShellMode(ctx, "room", "t", "code", "admin-2")
		if err != nil || reset != (store.ShellModeSetting{Mode: store.ShellModeStandard}) {
			t.Fatalf("reset %+v, %v", reset, err)
		}
		if m, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || m != (store.ShellModeSetting{Mode: store.ShellModeStandard}) {
			t.Fatalf("mode after reset %+v, %v", m, err)
		}
		entries, err := s.ListAudit(ctx, store.AuditFilter{Subject: subject})
		if err != nil || len(entries) != 2 {
			t.Fatalf("audit %+v, %v", entries, err)
		}
		var detail map[string]string
		if err := json.Unmarshal(entries[0].Detail, &detail); err != nil {
			t.Fatal(err)
		}
		if e := entries[0]; e.Actor != "admin-2" || e.Action != store.ActionShellModeReset || !e.At.Equal(t0.Add(time.Minute)) ||
			!reflect.DeepEqual(detail, map[string]string{"channel": "room", "thread": "t", "agent": "code", "previous": "minimal"}) {
			t.Fatalf("audit entry %+v, detail %v", e, detail)
		}
	})

	t.Run("AFailedAuditWriteRollsBackTheModeWrite", func(t *testing.T) {
		s, failAudit := cf.openFaulty(t, nil, nil)
		if _, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeMinimal, "", "admin-1"); err != nil {
			t.Fatal(err)
		}
		// The audit entry is written after the change, in the same transaction; make it fail.
		failAudit.Store(true)
		if _, err := s.SetShellMode(ctx, "room", "t", "code", store.ShellModeStandard, "", "admin-2"); err == nil {
			t.Fatal("SetShellMode succeeded without its audit entry")
		}
		if _, err := s.ResetShellMode(ctx, "room", "t", "code", "admin-2"); err == nil {
			t.Fatal("ResetShellMode succeeded without its audit entry")
		}
		if m, err := s.ShellMode(ctx, "room", "t", "code"); err != nil || m.Mode != store.ShellModeMinimal || m.UpdatedBy != "admin-1" {
			t.Fatalf("mode after the failed changes: %+v, %v; want minimal by admin-1", m, err)
		}
	})

	t.Run("InvalidChangesAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, args := range map[string]struct {
			channel, agent string
			mode           store.ShellMode
			actor          string
		}{
			"unknownMode": {"room", "code", "maximal", "a"},
			"noActor":     {"room", "code", store.ShellModeMinimal, ""},
			"noChannel":   {"", "code", store.ShellModeMinimal, "a"},
			"noAgent":     {"room", "", store.ShellModeMinimal, "a"},
		} {
			if _, err := s.SetShellMode(ctx, args.channel, "", args.agent, args.mode, "", args.actor); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("set %s: %v, want ErrInvalid", name, err)
			}
			if args.mode.Valid() {
				if _, err := s.ResetShellMode(ctx, args.channel, "", args.agent, args.actor); !errors.Is(err, store.ErrInvalid) {
					t.Errorf("reset %s: %v, want ErrInvalid", name, err)
				}
			}
		}
		if entries, _ := s.ListAudit(ctx, store.AuditFilter{}); len(entries) != 0 {
			t.Fatalf("refused changes were audited: %+v", entries)
		}
	})
}
