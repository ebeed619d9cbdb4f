package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

func TestLinksKeyIsCreatedOnceOwnerOnlyAndKept(t *testing.T) {
	dir := t.TempDir()
	live := secrets.New()
	first, err := LinksKey(dir, live)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "credentials", "links.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("links.key: %v, %v; want mode 0600", info, err)
	}
	if len(first) != 43 {
		t.Errorf("the key is %d bytes; want the 43 of 32 random bytes in base64url", len(first))
	}
	again, err := LinksKey(dir, secrets.New())
	if err != nil || string(again) != string(first) {
		t.Fatalf("the key changed on the second start: %v", err)
	}
	if got := live.Redact("key " + string(first)); strings.Contains(got, string(first)) {
		t.Errorf("the key is not a live secret: %q", got)
	}
}
