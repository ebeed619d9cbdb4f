package sandbox_test

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/sandbox"
	"github.com/turncli/turncli/internal/sandbox/mountview"
)

// groupsIn maps each controller of a /proc/<pid>/cgroup text to its group.
func groupsIn(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// TestEachSandboxWeighsAsOneTaskOfItsProcess: a command's cpu group is a group of its sandbox's
// own directly in this process's group, beside this process's threads, so that its CPU weight
// is an even share against each of them and each other sandbox, however many sandboxes there
// are; its pids group is its sandbox's own under turncli.sandboxes/.
func TestEachSandboxWeighsAsOneTaskOfItsProcess(t *testing.T) {
	requireSandboxes(t)
	if !strings.Contains(sandbox.Detect().Limits, "cpu") {
		t.Skipf("no writable cgroup v1 cpu controller here: %s", sandbox.Detect().Limits)
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	own := groupsIn(string(b))
	dir := t.TempDir()
	var cpuGroups []string
	for range 2 {
		sb, err := sandbox.Start(mountview.View{Workspace: dir}, sandbox.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
		out, code := runIn(t, sb, 2_000_401, "/", "cat /proc/self/cgroup")
		if code != 0 {
			t.Fatalf("cat /proc/self/cgroup: exit %d, %q", code, out)
		}
		in := groupsIn(out)
		if parent, name := path.Split(in["cpu"]); path.Clean(parent) != own["cpu"] || !strings.HasPrefix(name, "turncli.sandbox.") {
			t.Fatalf("the command's cpu group is %q; want turncli.sandbox.* directly in this process's %q", in["cpu"], own["cpu"])
		}
		if parent := path.Dir(in["pids"]); strings.Contains(sandbox.Detect().Limits, "pids") && parent != path.Join(own["pids"], "turncli.sandboxes") {
			t.Fatalf("the command's pids group is %q; want one under %q", in["pids"], path.Join(own["pids"], "turncli.sandboxes"))
		}
		cpuGroups = append(cpuGroups, in["cpu"])
	}
	if cpuGroups[0] == cpuGroups[1] {
		t.Fatalf("two sandboxes share the cpu group %q", cpuGroups[0])
	}
}
