package operators

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/turncli/turncli/primary/store"
)

// FirstAdmin is the name of the admin created on a fresh state directory.
const FirstAdmin = "admin"

// FirstAdminFile is where the first admin's credential is written, under the state directory.
func FirstAdminFile(stateDir string) string {
	return filepath.Join(stateDir, "credentials", "operator-admin.token")
}

// NewCredential returns a fresh operator credential: 32 random bytes, base64url.
func NewCredential() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// Digest is what the store keeps of a credential.
func Digest(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// Add creates an operator with a fresh credential and returns the credential, which exists
// nowhere else afterwards.
func Add(ctx context.Context, ops store.Operators, name string, role store.OperatorRole) (string, error) {
	token := NewCredential()
	if _, err := ops.CreateOperator(ctx, store.NewOperator{Name: name, Role: role, Digest: Digest(token)}); err != nil {
		return "", err
	}
	return token, nil
}

// EnsureFirstAdmin creates the admin FirstAdmin when no operator exists, writing its
// credential to path (mode 0600, in a 0700 directory) before the operator is committed; it
// reports whether it created one. When an operator already exists it writes nothing. A
// non-empty given is the credential to use instead, one the deployer already holds (a
// Kubernetes Secret): then no file is written.
func EnsureFirstAdmin(ctx context.Context, ops store.Operators, path, given string) (bool, error) {
	existing, err := ops.ListOperators(ctx)
	if err != nil || len(existing) > 0 {
		return false, err
	}
	if given != "" {
		_, created, err := ops.CreateFirstOperator(ctx, store.NewOperator{Name: FirstAdmin, Role: store.RoleAdmin, Digest: Digest(given)})
		return created, err
	}
	token := NewCredential()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("first admin credential: %w", err)
	}
	if err := WriteCredentialFile(path, token); err != nil {
		return false, fmt.Errorf("first admin credential: %w", err)
	}
	_, created, err := ops.CreateFirstOperator(ctx, store.NewOperator{Name: FirstAdmin, Role: store.RoleAdmin, Digest: Digest(token)})
	if err != nil || !created { // another process won the race: its file, not ours, is current
		_ = os.Remove(path)
	}
	return created, err
}

// WriteCredentialFile writes token and a newline to path with mode 0600, through a temporary
// file and a rename, so the file is never readable by others nor half-written.
func WriteCredentialFile(path, token string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return errors.Join(err, os.Remove(tmp.Name()))
	}
	return nil
}
