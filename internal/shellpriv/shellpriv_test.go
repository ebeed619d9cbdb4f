package shellpriv_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/turncli/turncli/internal/shellpriv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction(shellpriv.SpawnerFunction))
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the user switch and the emptied bounding set are what is tested")
	}
}

// status runs cat /proc/self/status through StartAs and returns its fields.
func status(t *testing.T, u *shellpriv.User, attr func(*exec.Cmd)) map[string]string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("/bin/cat", "/proc/self/status")
	cmd.Dir = "/"
	cmd.Stdout = &out
	if attr != nil {
		attr(cmd)
	}
	if err := shellpriv.StartAs(cmd, u); err != nil {
		t.Fatalf("StartAs: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cat: %v", err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return fields
}

func TestChildHasNoCapabilitiesAndNoNewPrivs(t *testing.T) {
	requireRoot(t)
	u := &shellpriv.User{Uid: 65534, Gid: 65534}
	got := status(t, u, nil)
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if got[k] != "0000000000000000" {
			t.Errorf("%s = %q, want all zero", k, got[k])
		}
	}
	if got["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", got["NoNewPrivs"])
	}
	if want := "65534 65534 65534 65534"; got["Uid"] != want || got["Gid"] != want {
		t.Errorf("Uid = %q, Gid = %q; want %q for both", got["Uid"], got["Gid"], want)
	}
	if got["Groups"] != "" {
		t.Errorf("Groups = %q, want none", got["Groups"])
	}
	if !shellpriv.BoundingSetEmptied() {
		t.Error("BoundingSetEmptied = false as root")
	}
}

func TestThisProcessKeepsItsPrivileges(t *testing.T) {
	requireRoot(t)
	status(t, &shellpriv.User{Uid: 65534, Gid: 65534}, nil) // the spawner is restricted by now
	self, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(self), "NoNewPrivs:\t1") {
		t.Skip("the test process already runs with no_new_privs")
	}
	// Only the spawner's thread is restricted: a plain exec from this goroutine is unchanged.
	out, err := exec.Command("/bin/cat", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "NoNewPrivs:\t0") {
		t.Errorf("a command started without shellpriv has no_new_privs:\n%s", out)
	}
}

func TestWithoutUserOnlyPrivilegesAreDropped(t *testing.T) {
	requireRoot(t)
	got := status(t, nil, nil)
	if got["Uid"] != "0 0 0 0" || got["CapBnd"] != "0000000000000000" || got["NoNewPrivs"] != "1" {
		t.Errorf("Uid = %q, CapBnd = %q, NoNewPrivs = %q; want root, empty bounding set, 1", got["Uid"], got["CapBnd"], got["NoNewPrivs"])
	}
	// Even as uid 0, exec gives nothing back: the bounding set is empty.
	if got["CapEff"] != "0000000000000000" || got["CapPrm"] != "0000000000000000" {
		t.Errorf("CapEff = %q, CapPrm = %q; want zero", got["CapEff"], got["CapPrm"])
	}
}

func TestGivenSysProcAttrIsKept(t *testing.T) {
	requireRoot(t)
	got := status(t, &shellpriv.User{Uid: 65534, Gid: 65534}, func(c *exec.Cmd) {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	})
	// Setpgid: the child leads its own process group, named by its pid.
	if got["NSpgid"] == "" || got["NSpgid"] != got["Pid"] {
		t.Errorf("NSpgid = %q, Pid = %q; want the child to lead its own group", got["NSpgid"], got["Pid"])
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec    string
		want    shellpriv.User
		wantErr bool
	}{
		{spec: "65534:65534", want: shellpriv.User{Uid: 65534, Gid: 65534, Name: "nobody"}},
		{spec: "1234:5678", want: shellpriv.User{Uid: 1234, Gid: 5678}},
		{spec: "nobody", want: shellpriv.User{Uid: 65534, Gid: 65534, Name: "nobody"}},
		{spec: "nobody:0", wantErr: false, want: shellpriv.User{Uid: 65534, Gid: 0, Name: "nobody"}},
		{spec: "0", wantErr: true},
		{spec: "root", wantErr: true},
		{spec: "0:65534", wantErr: true},
		{spec: "", wantErr: true},
		{spec: "1234:", wantErr: true},
		{spec: ":1234", wantErr: true},
		{spec: "1234", wantErr: true}, // no such user to take a group from (unless the system has one)
		{spec: "no-such-user-here", wantErr: true},
		{spec: "4294967296:1", wantErr: true},
	}
	for _, tt := range tests {
		u, err := shellpriv.Parse(tt.spec)
		if tt.wantErr {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", tt.spec, u)
			}
			continue
		}
		if err != nil || *u != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.spec, u, err, tt.want)
		}
	}
}

func TestDefaultIsNobodyWhenRoot(t *testing.T) {
	u := shellpriv.Default()
	if os.Geteuid() != 0 {
		if u != nil {
			t.Errorf("Default() = %v without root, want nil", u)
		}
		return
	}
	if u == nil || u.Uid == 0 || u.Gid == 0 {
		t.Fatalf("Default() = %v as root, want an unprivileged user and group", u)
	}
}
