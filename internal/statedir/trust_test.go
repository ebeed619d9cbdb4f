package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadPrivateReadsOnlyWhatOnlyYouOrRootCanWrite(t *testing.T) {
	const stranger = 2099903 // an agent's user, say
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir, path string)
		refusal string // empty: read
	}{
		{"APrivateFileIsRead", func(*testing.T, string, string) {}, ""},
		{"AFileOfAnotherUserIsRefused", func(t *testing.T, _, path string) { chown(t, path, stranger) }, "belongs to uid 2099903"},
		{"ADirectoryOfAnotherUserIsRefused", func(t *testing.T, dir, _ string) { chown(t, dir, stranger) }, "belongs to uid 2099903"},
		{"AFileOthersMayWriteIsRefused", func(t *testing.T, _, path string) { chmod(t, path, 0o620) }, "others may write it (mode 0620)"},
		{"ADirectoryOthersMayWriteIsRefused", func(t *testing.T, dir, _ string) { chmod(t, dir, 0o777) }, "others may write it (mode 0777)"},
		{"ALinkIsRefused", func(t *testing.T, dir, path string) {
			target := filepath.Join(dir, "elsewhere")
			if err := os.Rename(path, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"AFIFOIsRefusedWithoutWaiting", func(t *testing.T, _, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"OneByteOverTheLimitIsRefused", func(t *testing.T, _, path string) {
			if err := os.WriteFile(path, make([]byte, maxPrivateFile+1), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "larger than 1048576 bytes"},
		{"TheLimitItselfIsRead", func(t *testing.T, _, path string) {
			if err := os.WriteFile(path, make([]byte, maxPrivateFile), 0o600); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, EndpointsFile)
			if err := os.WriteFile(path, []byte(`{"pid":1}`), 0o600); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, dir, path)
			_, err := ReadPrivate(path)
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Fatalf("error %v, want one saying %q", err, tc.refusal)
			}
		})
	}
}

// TestAPlantedEndpointsFileIsNotBelieved is the attack ReadPrivate stops: another user writes
// a .turncli/endpoints.json naming its own address and the real credential's file, where an
// operator will run turncli.
func TestAPlantedEndpointsFileIsNotBelieved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".turncli")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, EndpointsFile),
		[]byte(`{"grpc":"127.0.0.1:1","operator_token_file":"/var/lib/turncli/credentials/operator-admin.token","pid":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	chown(t, filepath.Join(dir, EndpointsFile), 2099903)
	chown(t, dir, 2099903)
	if ep, err := Read(dir); err == nil || !strings.Contains(err.Error(), "belongs to uid 2099903") {
		t.Fatalf("Read = %+v, %v; want the planted record refused", ep, err)
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
