package workerhub_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/testenv"
)

func helloMsg(h *workerv1.Hello) *workerv1.ConnectRequest {
	return &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Hello{Hello: h}}
}

func connected(env *testenv.Env, id string) int {
	n := 0
	for _, w := range env.Primary.Internals().Workers.Workers() {
		if w.ID == id {
			n++
		}
	}
	return n
}

func TestHubConnect(t *testing.T) {
	env := testenv.Start(t)
	credA, credB := testenv.WorkerCredential("key-a"), testenv.WorkerCredential("key-b")
	longID := strings.Repeat("w", 129)
	withURL := func(url string) *workerv1.ConnectRequest {
		h := hello("key-a", "url-worker")
		h.AgentCliUrl = url
		return helloMsg(h)
	}
	cases := []struct {
		name       string
		credential string
		id         string
		first      *workerv1.ConnectRequest
		want       codes.Code
	}{
		{"HelloOfAConfiguredWorkerIsWelcomed", credA, "good", helloMsg(hello("key-a", "good")), codes.OK},
		{"HelloWithAnHTTPSProxyIsWelcomed", credA, "tls", helloMsg(&workerv1.Hello{WorkerId: "tls", WorkerKey: "key-a", AgentCliUrl: "https://localhost:8443"}), codes.OK},
		{"NoCredentialIsUnauthenticated", "", "anon", helloMsg(hello("key-a", "anon")), codes.Unauthenticated},
		{"WrongCredentialIsUnauthenticated", "not-a-credential", "wrong", helloMsg(hello("key-a", "wrong")), codes.Unauthenticated},
		{"NoWorkerIDIsUnauthenticated", credA, "", helloMsg(hello("key-a", "")), codes.Unauthenticated},
		{"CredentialOfKeyAForKeyBIsPermissionDenied", credA, "thief", helloMsg(hello("key-b", "thief")), codes.PermissionDenied},
		{"CredentialOfKeyBForKeyAIsPermissionDenied", credB, "thief-b", helloMsg(hello("key-a", "thief-b")), codes.PermissionDenied},
		{"HelloWorkerIDOtherThanMetadataIsInvalid", credA, "meta-id", helloMsg(hello("key-a", "hello-id")), codes.InvalidArgument},
		{"WorkerIDOver128CharactersIsInvalid", credA, longID, helloMsg(hello("key-a", longID)), codes.InvalidArgument},
		{"FirstMessageOtherThanHelloIsInvalid", credA, "chatty", &workerv1.ConnectRequest{Event: &workerv1.ConnectRequest_Output{Output: &workerv1.CommandOutput{CommandId: "1", Data: []byte("x")}}}, codes.InvalidArgument},
		{"EmptyFirstMessageIsInvalid", credA, "empty", &workerv1.ConnectRequest{}, codes.InvalidArgument},
		{"EmptyAgentCLIURLIsInvalid", credA, "url-worker", withURL(""), codes.InvalidArgument},
		{"AgentCLIURLWithoutSchemeIsInvalid", credA, "url-worker", withURL("127.0.0.1:9"), codes.InvalidArgument},
		{"AgentCLIURLOfAnotherSchemeIsInvalid", credA, "url-worker", withURL("ftp://127.0.0.1:9"), codes.InvalidArgument},
		{"AgentCLIURLWithoutHostIsInvalid", credA, "url-worker", withURL("http://"), codes.InvalidArgument},
		{"AgentCLIURLWithUserinfoIsInvalid", credA, "url-worker", withURL("http://user:pw@127.0.0.1:9"), codes.InvalidArgument},
		{"AgentCLIURLWithPathIsInvalid", credA, "url-worker", withURL("http://127.0.0.1:9/api"), codes.InvalidArgument},
		{"AgentCLIURLWithQueryIsInvalid", credA, "url-worker", withURL("http://127.0.0.1:9?x=1"), codes.InvalidArgument},
		{"AgentCLIURLWithFragmentIsInvalid", credA, "url-worker", withURL("http://127.0.0.1:9#f"), codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, msg, err := connect(t, env, tc.credential, tc.id, tc.first)
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
			if tc.want != codes.OK {
				if n := connected(env, tc.id); n != 0 && tc.id != "" {
					t.Errorf("a refused worker is listed %d times", n)
				}
				return
			}
			if msg.GetWelcome().GetSessionId() == "" {
				t.Fatalf("first message = %v, want Welcome with a session id", msg)
			}
			if n := connected(env, tc.id); n != 1 {
				t.Errorf("welcomed worker is listed %d times, want once", n)
			}
			f.hangUp()
		})
	}
}

func TestHubWelcomedWorkerIsRoutableAtOnce(t *testing.T) {
	// Welcome means "you will get commands": a runtime that runs a command right after the
	// worker was welcomed finds it.
	env := testenv.Start(t)
	for i := range 20 {
		id := "eager-" + string(rune('a'+i))
		f := startFake(t, env, "key-b", id)
		if n := connected(env, id); n != 1 {
			t.Fatalf("worker %s was welcomed but is listed %d times", id, n)
		}
		f.hangUp()
		if st := f.ended(); st.Code() != codes.Canceled {
			t.Fatalf("hang-up status = %v", st)
		}
	}
}

func TestHubReplacement(t *testing.T) {
	env := testenv.Start(t)

	t.Run("SecondConnectionWithTheSameIDReplacesTheFirst", func(t *testing.T) {
		first := startFake(t, env, "key-a", "twin")
		second := startFake(t, env, "key-a", "twin")
		if st := first.ended(); st.Code() != codes.Aborted {
			t.Fatalf("first connection ended with %v, want Aborted", st)
		}
		if n := connected(env, "twin"); n != 1 {
			t.Fatalf("twin is listed %d times, want once", n)
		}
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
		ctx := deadline(t)
		done := asyncBash(ctx, env, id, "to-second", "echo hi", nil)
		start := second.nextStart()
		second.output(start.GetCommandId(), workerv1.OutputStream_OUTPUT_STREAM_STDOUT, "from second\n")
		second.exit(&workerv1.CommandExited{CommandId: start.GetCommandId()})
		out := await(t, ctx, done, "RunBash")
		if out.err != nil || out.run.stdout.String() != "from second\n" || out.run.result.GetError() != "" {
			t.Fatalf("RunBash = %+v, %v", out.run, out.err)
		}
		second.hangUp()
	})

	t.Run("WorkerWhoseConnectionEndsReconnectsAndIsRoutableAgain", func(t *testing.T) {
		w := env.StartWorker(t, "key-a", "comeback")
		// A fake with the same id takes the worker's place; the worker's stream ends, it
		// reconnects after its backoff and takes the place back, ending the fake's stream.
		intruder := startFake(t, env, "key-a", "comeback")
		if st := intruder.ended(); st.Code() != codes.Aborted {
			t.Fatalf("intruder ended with %v, want Aborted (replaced by the reconnecting worker)", st)
		}
		id := env.Open(t, func(r *responsev1.OpenResponseRequest) { r.WorkerKey = "key-a" })
		out, err := runBash(deadline(t), env, id, "after-reconnect",
			`echo "$MINDROOM_AGENT_CLI_URL"; mindroom-agent tools call test.echo '{"back":true}'`, nil)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.stdout.String()), "\n")
		if out.result.GetExitCode() != 0 || out.result.GetError() != "" || len(lines) != 2 || lines[0] != w.ProxyURL() {
			t.Fatalf("result %v stdout %q stderr %q", out.result, out.stdout.String(), out.stderr.String())
		}
		if rs := out.result.GetReceipts(); len(rs) != 1 || rs[0].GetOutcomeJson() != `{"back":true}` {
			t.Errorf("receipts = %v", rs)
		}
	})
}
