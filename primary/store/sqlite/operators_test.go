package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/sqlite"
)

func TestOperatorFiles(t *testing.T) {
	ctx := context.Background()

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
