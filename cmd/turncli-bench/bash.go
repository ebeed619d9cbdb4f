package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/shellhost"
	"github.com/turncli/turncli/primary"
)

// The samples measureBash takes, one of each in turn.
const (
	bashFloor      = iota // `bash -c true`, started directly
	bwrapFloor            // the same command in bwrap with the sandbox's isolation
	sandboxLocal          // a later command of a primary-local response: its sandbox exists
	sandboxWorker         // the same on the worker
	offLocal              // a later command, isolation off
	offWorker             // the same on the worker
	firstLocal            // the first command of a new primary-local response: it makes the sandbox
	firstWorker           // the same on the worker
	offFirstLocal         // the first command of a new response, isolation off
	offFirstWorker        // the same on the worker
	bashSamples
)

// bwrapInstall is what a machine without bwrap needs.
const bwrapInstall = "install bubblewrap (Debian: apt-get install bubblewrap)"

// measureBash times RunBash of `true` through ResponseService (the runtime's gRPC call over
// loopback TCP, from the request until the result arrives), primary-local and on a worker,
// beside two floors: `bash -c true` started directly by this process, and the same command in
// bwrap with the isolation a response's sandbox has (PID, IPC and mount namespaces, the root
// read-only, a fresh /proc, a minimal /dev, a private /tmp, the workspace writable).
//
// Commands run in a sandbox of their response's own where the host can make one (the default;
// internal/sandbox): the response's first command makes it, later ones join it. So the
// measure times later commands of one long-lived response, and separately the first command of
// a new response (opened and closed untimed around it, the close timed on its own), on a rig
// with the default isolation and on a second rig with isolation off. The ten samples run
// interleaved, one of each in turn in rotating order, so load from elsewhere falls on all
// alike; each round's value is the median of its samples.
func measureBash(ctx context.Context, b *bench) ([]row, error) {
	r, err := startRig(ctx, b.cfg, true)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	off, err := startRig(ctx, b.cfg, false, func(c *primary.Config) { c.Shells.Isolation.Mode = shellhost.IsolationOff })
	if err != nil {
		return nil, err
	}
	defer off.stop()
	off.workerIsolation = shellhost.IsolationConfig{Mode: shellhost.IsolationOff}
	if err := off.startWorker(ctx, b.cfg, off.dir+"/worker"); err != nil {
		return nil, err
	}
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	workspace := filepath.Join(r.dir, "bwrap-workspace")
	if err := os.Mkdir(workspace, 0o700); err != nil {
		return nil, err
	}
	// The tmpfs on /tmp comes before the workspace's bind: the workspace is under /tmp here, and
	// a later tmpfs would cover it.
	bwrapArgs := []string{"--unshare-pid", "--unshare-ipc", "--die-with-parent",
		"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", workspace, workspace, "--chdir", workspace, "bash", "--noprofile", "--norc", "-c", "true"}
	bwrapPath, err := exec.LookPath("bwrap")
	noBwrap := ""
	if err != nil {
		noBwrap = "bwrap not found on PATH; " + bwrapInstall
	}

	seq := 0
	run := func(rg *rig, id, command string) (time.Duration, string, error) {
		seq++
		var out bytes.Buffer
		start := time.Now()
		result, err := runBash(ctx, rg.runtime, &responsev1.RunBashRequest{ResponseId: id, BashCallId: fmt.Sprint("bash-", seq), Command: command},
			func(c *responsev1.OutputChunk) { out.Write(c.GetData()) })
		if err != nil {
			return 0, "", err
		}
		d := time.Since(start)
		if !succeeded(result) {
			return 0, "", fmt.Errorf("RunBash of %s: %s", command, outcome(result))
		}
		return d, out.String(), nil
	}
	open := func(rg *rig, key string) (string, error) {
		resp, err := rg.runtime.OpenResponse(ctx, &responsev1.OpenResponseRequest{
			AgentName: "bench", RequesterId: "@bench:example.org",
			Conversation: &conversationv1.Conversation{Channel: "!bench:example.org", Thread: "$bench"},
			ShellMode:    responsev1.ShellMode_SHELL_MODE_MINIMAL, WorkerKey: key,
		})
		if err != nil {
			return "", fmt.Errorf("OpenResponse: %w", err)
		}
		return resp.GetResponseId(), nil
	}
	// paths are the samples through ResponseService: their rig, worker key and (later
	// commands) long-lived response.
	type path struct {
		rig   *rig
		key   string
		first bool
		id    string
	}
	paths := map[int]*path{
		sandboxLocal: {rig: r}, sandboxWorker: {rig: r, key: workerKey},
		offLocal: {rig: off}, offWorker: {rig: off, key: workerKey},
		firstLocal: {rig: r, first: true}, firstWorker: {rig: r, key: workerKey, first: true},
		offFirstLocal: {rig: off, first: true}, offFirstWorker: {rig: off, key: workerKey, first: true},
	}
	closes := map[int][]float64{} // CloseResponse after a first command, in ms
	sample := func(kind int) (time.Duration, error) {
		switch kind {
		case bashFloor, bwrapFloor:
			cmd := exec.CommandContext(ctx, bashPath, "-c", "true")
			if kind == bwrapFloor {
				cmd = exec.CommandContext(ctx, bwrapPath, bwrapArgs...)
			}
			cmd.Env = []string{}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			d := time.Since(start)
			if err != nil {
				return 0, fmt.Errorf("%s: %w: %s", cmd.Path, err, strings.TrimSpace(stderr.String()))
			}
			return d, nil
		}
		p := paths[kind]
		if !p.first {
			d, _, err := run(p.rig, p.id, "true")
			return d, err
		}
		id, err := open(p.rig, p.key)
		if err != nil {
			return 0, err
		}
		d, _, err := run(p.rig, id, "true")
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := p.rig.closeResponse(ctx, id); err != nil {
			return 0, fmt.Errorf("CloseResponse: %w", err)
		}
		closes[kind] = append(closes[kind], ms(time.Since(start)))
		return d, nil
	}

	// Open the long-lived responses and warm everything up, uncounted. The first command of
	// each long-lived response tells whether it runs sandboxed: in a PID namespace of its own.
	hostPidNS, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return nil, err
	}
	ownPidNS := map[int]bool{}
	for _, kind := range []int{sandboxLocal, sandboxWorker, offLocal, offWorker} {
		p := paths[kind]
		if p.id, err = open(p.rig, p.key); err != nil {
			return nil, err
		}
		_, out, err := run(p.rig, p.id, "readlink /proc/self/ns/pid")
		if err != nil {
			return nil, err
		}
		ownPidNS[kind] = strings.TrimSpace(out) != hostPidNS
	}
	if ownPidNS[offLocal] || ownPidNS[offWorker] {
		return nil, fmt.Errorf("with isolation off, commands ran in a PID namespace of their own (primary-local %v, worker %v)", ownPidNS[offLocal], ownPidNS[offWorker])
	}
	notSandboxed := map[int]string{}
	for _, kind := range []int{sandboxLocal, sandboxWorker} {
		if !ownPidNS[kind] {
			notSandboxed[kind] = "commands did not run in a sandbox here, so there is nothing to compare with bwrap: " + r.p.Internals().Isolation.Detail
		}
	}
	for kind := range bashSamples {
		if kind == bwrapFloor && noBwrap != "" {
			continue
		}
		if _, err := sample(kind); err != nil {
			if kind != bwrapFloor {
				return nil, err
			}
			noBwrap = fmt.Sprintf("bwrap could not run here (%v); its isolation needs root or unprivileged user namespaces", err)
		}
	}
	clear(closes)

	s := b.cfg.scale
	var rounds [bashSamples][]float64
	for round := 0; round < s.rounds; round++ {
		var samples [bashSamples][]float64
		for n := 0; n < s.processRuns; n++ {
			for k := range bashSamples {
				kind := (n + k) % bashSamples
				if kind == bwrapFloor && noBwrap != "" {
					continue
				}
				d, err := sample(kind)
				if err != nil {
					return nil, err
				}
				samples[kind] = append(samples[kind], ms(d))
			}
		}
		for kind := range bashSamples {
			if len(samples[kind]) > 0 {
				rounds[kind] = append(rounds[kind], median(samples[kind]))
			}
		}
	}

	value := func(kind int) float64 { return median(rounds[kind]) }
	// against builds the row of a sample beside a floor.
	against := func(kind, floorKind int) row {
		return row{unit: millis, value: value(kind), floor: value(floorKind), rounds: rounds[kind], floors: rounds[floorKind],
			ratios: ratios(rounds[kind], rounds[floorKind])}
	}
	bwrapNote := "floor: `bwrap --unshare-pid --unshare-ipc --die-with-parent --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp --bind WS WS --chdir WS bash --noprofile --norc -c true` started directly (root, empty environment), which makes and ends its namespaces every time"
	skipBwrap := func(rw row, kind int) row {
		rw.note = bwrapNote
		switch {
		case notSandboxed[kind] != "":
			rw.skipped = notSandboxed[kind]
		case noBwrap != "":
			rw.skipped = noBwrap
		}
		return rw
	}
	later := func(kind, offKind int) string {
		return fmt.Sprintf("a later command of one response, whose sandbox exists (the spawner joins its namespaces and control groups for one clone, as the agent's user); with isolation off %s, so the sandbox costs a command %+.2f ms",
			millis.format(value(offKind)), value(kind)-value(offKind))
	}
	first := func(kind, laterKind, offKind int) string {
		ends := "which ends the sandbox"
		if kind == firstWorker {
			ends = "which returns once the worker is sent the release (it ends the sandbox after)"
		}
		return fmt.Sprintf("the first command of a new response, which makes its sandbox (a re-exec of this binary as its init, namespaces, the mount view, control groups): %+.2f ms over a later command; the first command with isolation off takes %s; CloseResponse after it, %s, %s (isolation off: %s), not counted",
			value(kind)-value(laterKind), millis.format(value(offKind)), ends,
			millis.format(median(closes[kind])), millis.format(median(closes[offKind])))
	}

	rows := []row{}
	add := func(rw row, key, measure string, tgt target) {
		rw.key, rw.measure, rw.target = key, measure, tgt
		rows = append(rows, rw)
	}
	recorded := target{kind: recordedValue, text: "recorded"}
	for _, p := range []struct {
		where                         string
		key                           string
		sandboxed, off, first, offFst int
		offLimit                      float64
	}{
		{"primary-local", "local", sandboxLocal, offLocal, firstLocal, offFirstLocal, 1.5},
		{"on a worker", "worker", sandboxWorker, offWorker, firstWorker, offFirstWorker, 2},
	} {
		rw := against(p.sandboxed, bashFloor)
		rw.note = later(p.sandboxed, p.off) + "; floor: `bash -c true` started directly (empty environment)"
		if notSandboxed[p.sandboxed] != "" {
			rw.note = notSandboxed[p.sandboxed]
		}
		add(rw, "bash-"+p.key, "RunBash `true` via ResponseService, "+p.where+", sandboxed", target{kind: recordedValue, text: "recorded (judged against bwrap)"})
		add(skipBwrap(against(p.sandboxed, bwrapFloor), p.sandboxed), "bash-"+p.key+"-bwrap",
			"the same against `bash -c true` in bwrap with the same isolation ("+p.where+")", target{kind: ratioAtMost, limit: 1.2, text: "≤ 1.2× bwrap"})
		rw = skipBwrap(against(p.first, bwrapFloor), p.sandboxed)
		rw.note = first(p.first, p.sandboxed, p.offFst) + "; floor: bwrap, as above"
		add(rw, "bash-"+p.key+"-first", "RunBash `true`, the first command of a new response, "+p.where+" (it makes the sandbox), against bwrap", recorded)
		rw = against(p.off, bashFloor)
		rw.note = "a second primary and worker with --isolation off: no namespaces, every agent as the shell user; floor: `bash -c true`"
		add(rw, "bash-"+p.key+"-off", "RunBash `true` via ResponseService, "+p.where+", isolation off", target{kind: ratioAtMost, limit: p.offLimit, text: fmt.Sprintf("≤ %g× `bash -c true`", p.offLimit)})
	}
	return rows, nil
}
