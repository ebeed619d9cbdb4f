package drivertest

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/turncli/turncli/primary/store"
)

func (cf conformance) testOperators(t *testing.T) {
	ctx := context.Background()
	newOp := func(name string, role store.OperatorRole) store.NewOperator {
		return store.NewOperator{Name: name, Role: role, Digest: sha256.Sum256([]byte("credential of " + name))}
	}

	t.Run("CreatedOperatorsAreListedByName", func(t *testing.T) {
		clk := &clock{t: t0}
		s := cf.open(t, nil, clk)
		for _, o := range []store.NewOperator{newOp("zoe", store.RoleMember), newOp("ann", store.RoleAdmin)} {
			if _, err := s.CreateOperator(ctx, o); err != nil {
				t.Fatalf("CreateOperator(%s): %v", o.Name, err)
			}
		}
		got, err := s.ListOperators(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Name != "ann" || got[0].Role != store.RoleAdmin || got[1].Name != "zoe" || got[1].Role != store.RoleMember {
			t.Fatalf("ListOperators = %+v", got)
		}
		if got[0].Digest != newOp("ann", "").Digest || !got[0].CreatedAt.Equal(t0) {
			t.Fatalf("ann = %+v", got[0])
		}
	})

	t.Run("DuplicateNameIsRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, err := s.CreateOperator(ctx, newOp("ann", store.RoleAdmin)); err != nil {
			t.Fatal(err)
		}
		o := newOp("ann", store.RoleMember)
		o.Digest = sha256.Sum256([]byte("another"))
		if _, err := s.CreateOperator(ctx, o); !errors.Is(err, store.ErrExists) {
			t.Fatalf("second ann: err = %v, want ErrExists", err)
		}
		got, _ := s.ListOperators(ctx)
		if len(got) != 1 || got[0].Role != store.RoleAdmin {
			t.Fatalf("after refusal: %+v", got)
		}
	})

	t.Run("RemovedOperatorIsGoneAndUnknownNameIsNotFound", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, err := s.CreateOperator(ctx, newOp("ann", store.RoleAdmin)); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveOperator(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ListOperators(ctx); len(got) != 0 {
			t.Fatalf("after remove: %+v", got)
		}
		if err := s.RemoveOperator(ctx, "ann"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("remove again: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("InvalidOperatorsAreRefused", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		for name, o := range map[string]store.NewOperator{
			"empty name": newOp("", store.RoleAdmin),
			"slash":      newOp("a/b", store.RoleAdmin),
			"bad role":   newOp("ann", "owner"),
			"no digest":  {Name: "ann", Role: store.RoleAdmin},
		} {
			if _, err := s.CreateOperator(ctx, o); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: err = %v, want ErrInvalid", name, err)
			}
		}
	})

	t.Run("FirstOperatorIsCreatedOnlyWhenNoneExists", func(t *testing.T) {
		s := cf.open(t, nil, nil)
		if _, created, err := s.CreateFirstOperator(ctx, newOp("admin", store.RoleAdmin)); err != nil || !created {
			t.Fatalf("first: created=%v err=%v", created, err)
		}
		if _, created, err := s.CreateFirstOperator(ctx, newOp("other", store.RoleAdmin)); err != nil || created {
			t.Fatalf("second: created=%v err=%v", created, err)
		}
		if got, _ := s.ListOperators(ctx); len(got) != 1 || got[0].Name != "admin" {
			t.Fatalf("operators = %+v", got)
		}
	})
}
