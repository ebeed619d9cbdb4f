package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestASandboxsLimitsHold runs a process bomb, a descriptor hoarder, a memory hog and a disk
// filler, each in a turn of its own: each ends with a clear error, and the primary stays ready.
func TestASandboxsLimitsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	requireRootBinaries(t, "mounts a small file system for the workspaces")
	// Workspaces on a file system of their own, 32 MiB.
	ws := filepath.Join(t.TempDir(), "workspaces")
	if err := os.Mkdir(ws, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", ws, "tmpfs", 0, "size=32m,mode=0711"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(ws, syscall.MNT_DETACH) })
	rig := startIsolationRig(t, "--sandbox-processes", "64", "--sandbox-memory", "64MiB", "--sandbox-open-files", "128", "--workspaces-dir", ws)

	for _, c := range []struct{ name, agent, command, want string }{
		{"ProcessBomb", "bomb", "for i in $(seq 200); do sleep 30 & done 2>/dev/null; wait", "the sandbox's process limit (64) was reached"},
		// Connections to the host's services are descriptors too: a shell cannot hold thousands.
		{"DescriptorHoarder", "hoarder", "ulimit -Hn; for i in $(seq 500); do exec {fd}<>/dev/tcp/127.0.0.1/${MINDROOM_AGENT_CLI_URL##*:} || break; done",
			"Too many open files"},
		{"MemoryHog", "hog", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}", "the sandbox's memory limit (64 MiB) was reached"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := rig.bash(t, rig.open(t, c.agent, "", false), c.name, c.command)
			if !strings.Contains(out.stderr, c.want) {
				t.Fatalf("stderr %q lacks %q (exit %d)", out.stderr, c.want, out.result.GetExitCode())
			}
		})
	}
	t.Run("DiskFiller", func(t *testing.T) {
		resp := rig.open(t, "filler", "", false)
		out := rig.bash(t, resp, "fill", "head -c 50000000 /dev/zero > big; echo $?")
		if !strings.Contains(out.stderr, "No space left on device") {
			t.Fatalf("the filler: %q %q", out.stdout, out.stderr)
		}
		// The store's file system is another: the primary stays ready, and durable.
		res, err := http.Get(rig.restURL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/readyz: %d", res.StatusCode)
		}
		rig.bash(t, resp, "free", "rm big")
		if out := rig.bash(t, resp, "again", "echo ok"); out.stdout != "ok\n" {
			t.Fatalf("after freeing space: %q %q", out.stdout, out.stderr)
		}
	})
}
