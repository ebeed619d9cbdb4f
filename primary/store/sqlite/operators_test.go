package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

func TestOperators(t *testing.T) {
	ctx := context.Background()
	newOp := func(name string, role store.OperatorRole) store.NewOperator {
		return store.NewOperator{Name: name, Role: role, Digest: sha256.Sum256([]byte("credential of " + name))}
	}

	t.Run("CreatedOperatorsAreListedByName", func(t *testing.T) {
		clk := &clock{t: t0}
		s := open(t, "", clk)
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
		s := open(t, "", nil)
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
		s := open(t, "", nil)
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
		s := open(t, "", nil)
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
		s := open(t, "", nil)
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

	t.Run("DatabaseHoldsOnlyTheDigest", func(t *testing.T) {
		dir := t.TempDir()
		credential := "raw-operator-credential-0123456789abcdefghijklmnop"
		digest := sha256.Sum256([]byte(credential))
		s, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateOperator(ctx, store.NewOperator{Name: "ann", Role: store.RoleAdmin, Digest: digest}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil { // checkpoints the WAL into the main file
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, sqlite.FileName+"*"))
		var all []byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		if bytes.Contains(all, []byte(credential)) {
			t.Fatal("the raw credential is in the database files")
		}
		if !bytes.Contains(all, digest[:]) {
			t.Fatal("the digest is not in the database files: the check above proves nothing")
		}
	})
}

func TestOperatorNames(t *testing.T) {
	for name, valid := range map[string]bool{
		"admin": true, "@alice:example.org": true, "a" + strings.Repeat("b", 127): true,
		"a" + strings.Repeat("b", 128): false, "": false, ".hidden": false, "has space": false, "slash/name": false,
	} {
		if got := store.ValidOperatorName(name); got != valid {
			t.Errorf("ValidOperatorName(%q) = %v, want %v", name, got, valid)
		}
	}
}

// TestOperatorsStampChangesWithEveryChangeFromAnyHandle opens the database twice, as the
// primary and `mindroom-primary operators` do: each create and remove through one changes the
// stamp the other sees, and reads or failed changes leave it alone.
func TestOperatorsStampChangesWithEveryChangeFromAnyHandle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	primary, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	cli, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	stamp := primary.OperatorsStamp
	seen := map[uint64]bool{stamp(): true}
	changed := func(what string) {
		t.Helper()
		s := stamp()
		if seen[s] {
			t.Fatalf("after %s the stamp is %d, seen before", what, s)
		}
		seen[s] = true
	}
	unchanged := func(what string) {
		t.Helper()
		if s := stamp(); !seen[s] {
			t.Fatalf("after %s the stamp changed to %d", what, s)
		}
	}
	d := [32]byte{1}
	if _, _, err := cli.CreateFirstOperator(ctx, store.NewOperator{Name: "admin", Role: store.RoleAdmin, Digest: d}); err != nil {
		t.Fatal(err)
	}
	changed("the first operator")
	if _, created, err := cli.CreateFirstOperator(ctx, store.NewOperator{Name: "other", Role: store.RoleAdmin, Digest: [32]byte{2}}); err != nil || created {
		t.Fatalf("second first operator: created %v, err %v", created, err)
	}
	unchanged("a first operator not created")
	for i := range 3 { // quick succession: each counts
		if _, err := cli.CreateOperator(ctx, store.NewOperator{Name: fmt.Sprintf("op%d", i), Role: store.RoleMember, Digest: [32]byte{byte(10 + i)}}); err != nil {
			t.Fatal(err)
		}
		changed("an operator created")
	}
	if _, err := cli.CreateOperator(ctx, store.NewOperator{Name: "op0", Role: store.RoleMember, Digest: [32]byte{20}}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	unchanged("a refused create")
	if _, err := primary.ListOperators(ctx); err != nil {
		t.Fatal(err)
	}
	unchanged("a read")
	if err := cli.RemoveOperator(ctx, "op1"); err != nil {
		t.Fatal(err)
	}
	changed("an operator removed")
	if err := cli.RemoveOperator(ctx, "op1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
	unchanged("a remove of nobody")
}
