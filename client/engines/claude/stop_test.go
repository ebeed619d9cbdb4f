package claude_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/turncli/turncli/client/engines"
	"github.com/turncli/turncli/internal/scriptedmodel/messages"
	"github.com/turncli/turncli/primary/store"
)

func TestSIGTERMStopsTheCLIAndStillWritesAResult(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	model := messages.Start(t, messages.ToolUse("Bash", writeFile), messages.Text("never reached"))
	run := &engineRun{model: model, task: "Write out.txt.", pidFile: filepath.Join(t.TempDir(), "pid")}
	s := r.start(t, run)
	p := r.pendingPrompt(t, messages.ToolUseID(0)) // the CLI runs its hook, which waits for people

	driver := readPid(t, run.pidFile)
	cli := childOf(t, driver)
	if len(groupMembers(t, cli)) < 2 {
		t.Fatalf("the CLI's process group %d holds %v; want the CLI and its hook at least", cli, groupMembers(t, cli))
	}
	if err := syscall.Kill(driver, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := s.resultLine(t)

	if res.Status != engines.StatusFailed || len(res.Errors) != 1 || res.Errors[0] != "stopped by SIGTERM before the run ended" || !sessionID.MatchString(res.Session) {
		t.Errorf("result %+v", res)
	}
	if left := groupMembers(t, cli); len(left) != 0 {
		t.Errorf("processes of the CLI's group outlived the driver: %v", left)
	}
	if got := fileText(t, filepath.Join(run.dir, "out.txt")); got != "" {
		t.Errorf("out.txt was written: %q", got)
	}
	r.decide(t, p, store.DecisionDeny, "") // lets the command's window drain
	s.wait(t)
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s within %v", path, waitBound)
		}
		time.Sleep(pollEvery)
	}
}

// procStat is a process's parent and process group, from /proc.
type procStat struct{ pid, ppid, pgrp int }

func processes(t *testing.T) []procStat {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var all []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		all = append(all, procStat{pid, ppid, pgrp})
	}
	return all
}

// childOf is the one child process of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	var children []int
	for _, p := range processes(t) {
		if p.ppid == pid {
			children = append(children, p.pid)
		}
	}
	if len(children) != 1 {
		t.Fatalf("process %d has children %v, want one", pid, children)
	}
	return children[0]
}

// groupMembers lists the live processes of a process group.
func groupMembers(t *testing.T, pgrp int) []int {
	t.Helper()
	var members []int
	for _, p := range processes(t) {
		if p.pgrp == pgrp {
			members = append(members, p.pid)
		}
	}
	return members
}
