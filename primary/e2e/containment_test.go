package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/containment"
	"github.com/turncli/turncli/primary"
)

// TestNothingOutlivesAKilledPrimaryOrWorker runs the real binaries: a command starts a
// grandchild that calls setsid (leaving the command's session and process group), then the
// process running the command — the worker, then the primary — is SIGKILLed, with no chance to
// clean up. The grandchild must be gone within 2 s: by the cgroup watchdog where the host has
// cgroups, by the command's supervisor without them (TURNCLI_NO_CGROUPS=1), and in a sandbox
// by the sandbox's end (its init's pipe from the killed process closes).
func TestNothingOutlivesAKilledPrimaryOrWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries")
	}
	bin := mpBuild(t)
	for _, tc := range []struct{ name, noCgroups, isolation string }{
		{"CgroupsWhereTheHostHasThem", "", "off"},
		{"Supervisor", "1", "off"},
		{"Sandbox", "", "required"},
		{"SandboxWithoutCgroups", "1", "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.isolation == "required" {
				requireRootBinaries(t, "sandboxes need root")
			}
			testNothingOutlivesAKilledPrimaryOrWorker(t, bin, containment.DisableEnv+"="+tc.noCgroups, "MINDROOM_ISOLATION="+tc.isolation)
		})
	}
}

func testNothingOutlivesAKilledPrimaryOrWorker(t *testing.T, bin string, env ...string) {
	sandboxed := env[len(env)-1] == "MINDROOM_ISOLATION=required"
	state := shellTempDir(t)
	prim := mpStart(t, "mindroom-primary", filepath.Join(bin, "mindroom-primary"), mpBaseEnv(t, env...),
		"--state-dir", state, "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--agent-cli-listen", "127.0.0.1:0", "--worker-keys", "w", "--log-level", "info")
	prim.waitLog(t, "primary serving", 1)
	var ep primary.Endpoints
	data, err := os.ReadFile(filepath.Join(state, primary.EndpointsFile))
	if err != nil || json.Unmarshal(data, &ep) != nil {
		t.Fatalf("endpoints.json: %v %s", err, data)
	}
	token := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("credential file: %v", err)
		}
		return strings.TrimSpace(string(b))
	}
	worker := mpStart(t, "mindroom-worker", filepath.Join(bin, "mindroom-worker"),
		mpBaseEnv(t, append(env, "MINDROOM_WORKER_CREDENTIAL="+token(ep.WorkerTokenFiles["w"]))...),
		"--primary", ep.GRPC, "--key", "w", "--id", "w1", "--state-dir", shellTempDir(t), "--log-level", "info")
	worker.waitLog(t, "connected to primary", 1)

	conn, err := grpc.NewClient(ep.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	api := responsev1.NewResponseServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), mpDeadline)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token(ep.RuntimeTokenFile))

	for _, tc := range []struct {
		name, workerKey string
		victim          *mpProc
	}{
		{"WorkerKilled", "w", worker},
		{"PrimaryKilled", "", prim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := api.OpenResponse(ctx, &responsev1.OpenResponseRequest{
				AgentName: "tester", RequesterId: "@alice:example.org", WorkerKey: tc.workerKey,
				Conversation: &conversationv1.Conversation{Channel: "!room:example.org", Thread: "$t"},
			})
			if err != nil {
				t.Fatalf("OpenResponse: %v", err)
			}
			pids := make(chan int, 1)
			var out bytes.Buffer
			go func() {
				// Ends with an error when the victim dies; only the pid matters.
				_, _ = mpRunBash(ctx, api, resp.GetResponseId(), "b-"+tc.name,
					`setsid bash --noprofile --norc -c 'echo escaped=$$; exec sleep 301' & sleep 300`,
					func(b []byte) {
						out.Write(b)
						if _, rest, ok := strings.Cut(out.String(), "escaped="); ok && strings.HasSuffix(rest, "\n") {
							if pid, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
								pids <- pid
							}
						}
					})
			}()
			var pid int
			select {
			case pid = <-pids:
			case <-ctx.Done():
				t.Fatal("the command never printed its escaped grandchild's pid")
			}
			if sandboxed {
				pid = hostPidOf(t, "sleep 301", nil) // it printed its pid in the sandbox's namespace
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				t.Fatalf("pidfd of %d: %v", pid, err)
			}
			defer unix.Close(fd)
			defer func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) }()
			if sid, _ := unix.Getsid(pid); sid != pid {
				t.Fatalf("the grandchild %d did not leave its session (sid %d)", pid, sid)
			}
			tc.victim.stop(t, syscall.SIGKILL)
			killed := time.Now()
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				left := 2*time.Second - time.Since(killed)
				n, err := unix.Poll(fds, max(int(left/time.Millisecond), 0))
				if err == unix.EINTR {
					continue
				}
				if n != 1 {
					t.Fatalf("the setsid grandchild %d still runs 2 s after the %s was SIGKILLed", pid, tc.victim.name)
				}
				return
			}
		})
	}
}
