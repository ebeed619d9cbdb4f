package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

func TestRuntimeCredentialIsCreatedOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	live := secrets.New()
	first, file, err := Runtime(dir, "", live)
	if err != nil {
		t.Fatal(err)
	}
	if file != filepath.Join(dir, "credentials", "runtime.token") {
		t.Fatalf("file %q", file)
	}
	again, _, err := Runtime(dir, "", secrets.New())
	if err != nil || again != first {
		t.Fatalf("second start read %q, %v; want the first start's credential", again, err)
	}
	if got := live.Redact("token " + first); strings.Contains(got, first) {
		t.Fatalf("the runtime credential is not a live secret: %q", got)
	}
	configured, file, err := Runtime(dir, "configured-runtime-credential", secrets.New())
	if err != nil || configured != "configured-runtime-credential" || file != "" {
		t.Fatalf("configured credential: %q in %q, %v; want it with no file", configured, file, err)
	}
}

func TestLoadWorkers(t *testing.T) {
	t.Run("AKeyGetsAFileOnceAndEverySourceIsALiveSecret", func(t *testing.T) {
		dir, mounted := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(mounted, "key-m.token"), []byte("mounted-credential\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		live := secrets.New()
		_, files, err := LoadWorkers(dir, Workers{Keys: []string{"key-a"}, Dir: mounted, Configured: map[string]string{"key-c": "configured-credential"}}, live)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(dir, "credentials", "workers", "key-a.token")
		if len(files) != 1 || files["key-a"] != want {
			t.Fatalf("files %v; want only key-a at %s", files, want)
		}
		created, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		for _, token := range []string{strings.TrimSpace(string(created)), "mounted-credential", "configured-credential"} {
			if got := live.Redact("x " + token); strings.Contains(got, token) {
				t.Errorf("%q is not a live secret: %q", token, got)
			}
		}
		_, _, err = LoadWorkers(dir, Workers{Keys: []string{"key-a"}}, secrets.New())
		if again, _ := os.ReadFile(want); err != nil || string(again) != string(created) {
			t.Fatalf("a second start rewrote the credential file: %v", err)
		}
	})
	t.Run("ABadKeyIsRefusedNamingTheRule", func(t *testing.T) {
		_, _, err := LoadWorkers(t.TempDir(), Workers{Keys: []string{"../escape"}}, secrets.New())
		if err == nil || err.Error() != `worker key "../escape": use 1..64 letters, digits, '.', '_' or '-'` {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("AnEmptyMountedCredentialIsRefused", func(t *testing.T) {
		mounted := t.TempDir()
		if err := os.WriteFile(filepath.Join(mounted, "key-e.token"), []byte("\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadWorkers(t.TempDir(), Workers{Dir: mounted}, secrets.New())
		if err == nil || err.Error() != "worker credentials: "+filepath.Join(mounted, "key-e.token")+" is empty" {
			t.Fatalf("err %v", err)
		}
	})
}
