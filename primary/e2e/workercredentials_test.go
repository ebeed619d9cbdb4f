package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/worker"
)

// Worker credentials from a read-only directory laid out as Kubernetes mounts a Secret (each
// <key>.token a link through ..data to a timestamped directory) admit their workers; the
// directory's other entries are skipped and nothing in it is changed.
func TestWorkerCredentialsFromAMountedSecretDirectory(t *testing.T) {
	dir := t.TempDir()
	version := filepath.Join(dir, "..2026_12_04_10_00_00.000000001")
	if err := os.Mkdir(version, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(version, "build.token"), []byte("build-credential-from-a-secret\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(version), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..data", "build.token"), filepath.Join(dir, "build.token")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil { // read-only, as a Secret volume is
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })

	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.Workers.Credentials.Dir = dir }))
	env.StartWorker(t, "build", "build-1", func(c *worker.Config) { c.Credential = "build-credential-from-a-secret" })

	fi, err := os.Stat(filepath.Join(version, "build.token"))
	if err != nil || fi.Mode().Perm() != 0o444 {
		t.Fatalf("the mounted credential's mode: %v, %v; want it left 0444", fi.Mode(), err)
	}
}
