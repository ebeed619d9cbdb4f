package hostkit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/hostkit"
	"github.com/turncli/turncli/internal/testenv"
)

type AddInput struct {
	A int `json:"a" description:"First addend."`
	B int `json:"b" description:"Second addend."`
}

type AddOutput struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, _ hostkit.Call, in AddInput) (AddOutput, error) {
	return AddOutput{Sum: in.A + in.B}, nil
}

type empty struct{}

func TestHost(t *testing.T) {
	env := testenv.Start(t)

	t.Run("TypedFunctionIsDescribedWithItsDerivedSchemaAndCalled", func(t *testing.T) {
		h := runHost(t, env, nil, hostkit.Toolkit{
			Name: "math_tk", Description: "Arithmetic.", Instructions: []string{"Integers only."},
			Functions: []hostkit.Function{hostkit.Func("add", "Adds two numbers", add).WithInstructions("Order does not matter.")},
		})
		h.waitRegistered()
		sh := openShell(t, env, env.Open(t))
		_, d := sh.cli("tools", "describe", "math_tk.add")
		want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,` +
			`"properties":{"a":{"description":"First addend.","type":"integer"},"b":{"description":"Second addend.","type":"integer"}},` +
			`"required":["a","b"],"type":"object"}`
		if got := canon(t, d["input_schema"]); got != want {
			t.Errorf("input_schema = %s", got)
		}
		if got := canon(t, d["instructions"]); got != `["Integers only.","Order does not matter."]` {
			t.Errorf("instructions = %s", got)
		}
		expectReceipt(t, sh.call("math_tk.add", `{"a":2,"b":40}`), "completed", `{"sum":42}`)
	})

	t.Run("ArgumentsFailingTheDerivedSchemaNeverReachTheFunction", func(t *testing.T) {
		var calls atomic.Int32
		counted := hostkit.Func("add", "Adds.", func(ctx context.Context, c hostkit.Call, in AddInput) (AddOutput, error) {
			calls.Add(1)
			return add(ctx, c, in)
		})
		runHost(t, env, nil, hostkit.Toolkit{Name: "strict_tk", Functions: []hostkit.Function{counted}}).waitRegistered()
		sh := openShell(t, env, env.Open(t))
		for _, args := range []string{`{"a":"2","b":1}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`, `{"a":1.5,"b":2}`} {
			r := sh.call("strict_tk.add", args)
			if msg, _ := r["outcome"].(string); r["status"] != "failed" || !strings.HasPrefix(msg, "Invalid tool arguments") {
				t.Errorf("call with %s = %v, want Invalid tool arguments", args, r)
			}
		}
		expectReceipt(t, sh.call("strict_tk.add", `{"a":1,"b":2}`), "completed", `{"sum":3}`)
		if n := calls.Load(); n != 1 {
			t.Fatalf("the function ran %d times, want once (the valid call only)", n)
		}
	})

	t.Run("WaitingShowsInTheReceiptWhileTheFunctionWaits", func(t *testing.T) {
		asked, answer := make(chan struct{}), make(chan string)
		ask := hostkit.Func("ask", "Asks a person.", func(ctx context.Context, c hostkit.Call, _ empty) (string, error) {
			c.Waiting()
			close(asked)
			a := <-answer
			c.Running()
			return a, nil
		})
		ping := hostkit.Func("ping", "Pongs.", func(context.Context, hostkit.Call, empty) (string, error) { return "pong", nil })
		runHost(t, env, nil, hostkit.Toolkit{Name: "ask_tk", Functions: []hostkit.Function{ask, ping}}).waitRegistered()
		sh := openShell(t, env, env.Open(t))
		id := sh.submit("ask_tk.ask", `{}`)
		receive(t, asked)
		// The host sends in order: once ping's result is in, the waiting before it is applied.
		expectReceipt(t, sh.call("ask_tk.ping", `{}`), "completed", `"pong"`)
		if st := sh.get(id)["status"]; st != "waiting" {
			t.Fatalf("status while the function waits = %v, want waiting", st)
		}
		answer <- "yes"
		expectReceipt(t, sh.wait(id), "completed", `"yes"`)
	})

	t.Run("AttachmentsAndIdentityReachTheReceiptAndTheFunction", func(t *testing.T) {
		snap := hostkit.Func("snap", "Takes a picture.", func(_ context.Context, c hostkit.Call, _ empty) (map[string]string, error) {
			c.Attach(hostkit.Attachment{Kind: hostkit.Image, MimeType: "image/png", Name: "p.png", URI: "file:///p.png", Size: 67})
			c.Attach(hostkit.Attachment{Kind: hostkit.File, MimeType: "text/plain"})
			return map[string]string{
				"agent": c.Identity.Agent, "requester": c.Identity.Requester, "channel": c.Identity.Channel,
				"thread": c.Identity.Thread, "bash": c.BashCallID, "same_response": c.Identity.ResponseID,
			}, nil
		})
		runHost(t, env, nil, hostkit.Toolkit{Name: "snap_tk", Functions: []hostkit.Function{snap}}).waitRegistered()
		responseID := env.Open(t)
		sh := openShell(t, env, responseID)
		r := sh.call("snap_tk.snap", `{}`)
		expectReceipt(t, r, "completed", `{"agent":"tester","bash":"bash-1","channel":"!room:example.org","requester":"@alice:example.org","same_response":"`+responseID+`","thread":"$thread"}`)
		if got := canon(t, r["attachments"]); got != `[{"kind":"image","mime_type":"image/png","name":"p.png","size":67,"uri":"file:///p.png"},{"kind":"file","mime_type":"text/plain"}]` {
			t.Errorf("attachments = %s", got)
		}
	})

	t.Run("ErrorsAndPanicsFailTheCallWithTheirMessage", func(t *testing.T) {
		fail := hostkit.Func("fail", "Fails.", func(context.Context, hostkit.Call, empty) (any, error) { return nil, errors.New("no such user") })
		boom := hostkit.Func("boom", "Panics.", func(context.Context, hostkit.Call, empty) (any, error) { panic("kaput") })
		h := runHost(t, env, nil, hostkit.Toolkit{Name: "fail_tk", Functions: []hostkit.Function{fail, boom}})
		h.waitRegistered()
		sh := openShell(t, env, env.Open(t))
		expectReceipt(t, sh.call("fail_tk.fail", `{}`), "failed", `"no such user"`)
		expectReceipt(t, sh.call("fail_tk.boom", `{}`), "failed", `"the tool panicked: kaput"`)
		expectReceipt(t, sh.call("fail_tk.fail", `{}`), "failed", `"no such user"`) // the host survived
	})

	t.Run("ResultOverTheMessageLimitFailsOnlyThatCall", func(t *testing.T) {
		huge := hostkit.Func("huge", "Returns 5 MiB.", func(context.Context, hostkit.Call, empty) (string, error) {
			return strings.Repeat("x", 5<<20), nil
		})
		ok := hostkit.Func("ok", "Returns yes.", func(context.Context, hostkit.Call, empty) (string, error) { return "yes", nil })
		runHost(t, env, nil, hostkit.Toolkit{Name: "huge_tk", Functions: []hostkit.Function{huge, ok}}).waitRegistered()
		sh := openShell(t, env, env.Open(t))
		r := sh.call("huge_tk.huge", `{}`)
		if r["status"] != "failed" || !strings.Contains(fmt.Sprint(r["outcome"]), "over the") {
			t.Fatalf("receipt = %v", r)
		}
		expectReceipt(t, sh.call("huge_tk.ok", `{}`), "completed", `"yes"`) // the host's stream survived
	})

	t.Run("DeferredToolkitIsLoadedOnceOnFirstDescribeAndNeverByListOrSearch", func(t *testing.T) {
		runHost(t, env, nil, hostkit.Toolkit{
			Name: "lazy_math_tk", Description: "Arithmetic, loaded late.", Deferred: true,
			Functions: []hostkit.Function{hostkit.Func("add", "Adds two numbers", add)},
		}).waitRegistered()
		entry, ok := env.Primary.Internals().Registry.Lookup("lazy_math_tk")
		if !ok {
			t.Fatal("not registered")
		}
		sh := openShell(t, env, env.Open(t))
		sh.cli("tools", "list")
		sh.cli("tools", "search", "arithmetic")
		if n := entry.Loads(); n != 0 {
			t.Fatalf("loads after list and search = %d, want 0", n)
		}
		if code, d := sh.cli("tools", "describe", "lazy_math_tk.add"); code != 0 || d["function"] != "add" {
			t.Fatalf("describe = %d %v", code, d)
		}
		expectReceipt(t, sh.call("lazy_math_tk.add", `{"a":1,"b":1}`), "completed", `{"sum":2}`)
		sh.cli("tools", "describe", "lazy_math_tk.add")
		if n := entry.Loads(); n != 1 {
			t.Fatalf("loads = %d, want 1", n)
		}
	})

	t.Run("ClosingTheResponseCancelsTheFunctionsContext", func(t *testing.T) {
		started, stopped := make(chan struct{}), make(chan error, 1)
		block := hostkit.Func("block", "Blocks until cancelled.", func(ctx context.Context, _ hostkit.Call, _ empty) (any, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, ctx.Err()
		})
		runHost(t, env, nil, hostkit.Toolkit{Name: "block_tk", Functions: []hostkit.Function{block}}).waitRegistered()
		responseID := env.Open(t)
		openShell(t, env, responseID).submit("block_tk.block", `{}`)
		receive(t, started)
		if _, err := env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: responseID}); err != nil {
			t.Fatal(err)
		}
		if err := receive(t, stopped); !errors.Is(err, context.Canceled) {
			t.Fatalf("the function's context ended with %v, want Canceled", err)
		}
	})

	t.Run("SecondHostServingTheSameToolkitNameStopsWithErrNameTaken", func(t *testing.T) {
		tk := hostkit.Toolkit{Name: "dup_tk", Functions: []hostkit.Function{hostkit.Func("add", "Adds.", add)}}
		runHost(t, env, func(c *hostkit.Config) { c.HostID = "first" }, tk).waitRegistered()
		second := runHost(t, env, func(c *hostkit.Config) { c.HostID = "second" }, tk)
		err := second.exited()
		var rejected *hostkit.RegistrationError
		if !errors.As(err, &rejected) || !errors.Is(err, hostkit.ErrNameTaken) || rejected.Toolkit != "dup_tk" ||
			err.Error() != `toolkit "dup_tk" was not registered: toolkit "dup_tk" is already served by tool host "first"` {
			t.Fatalf("Run = %v, want a RegistrationError for ErrNameTaken naming the first host", err)
		}
	})

	t.Run("BuiltInToolkitNameStopsWithErrReserved", func(t *testing.T) {
		h := runHost(t, env, nil, hostkit.Toolkit{Name: "shell", Functions: []hostkit.Function{hostkit.Func("add", "Adds.", add)}})
		if err := h.exited(); !errors.Is(err, hostkit.ErrReserved) {
			t.Fatalf("Run = %v, want ErrReserved", err)
		}
	})

	t.Run("WrongTokenStopsWithUnauthenticated", func(t *testing.T) {
		h := runHost(t, env, func(c *hostkit.Config) { c.Token = "not-the-runtime-token" }, hostkit.Toolkit{Name: "nope_tk"})
		if err := h.exited(); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Run = %v, want Unauthenticated", err)
		}
	})

	t.Run("HostReconnectsAfterItsConnectionDropsAndServesAgain", func(t *testing.T) {
		var mu sync.Mutex
		var conns []net.Conn
		dial := func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := env.DialPrimary(ctx, addr)
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
			return c, err
		}
		h := runHost(t, env, func(c *hostkit.Config) {
			c.DialOptions = []grpc.DialOption{grpc.WithContextDialer(dial)}
		}, hostkit.Toolkit{Name: "flaky_net_tk", Functions: []hostkit.Function{hostkit.Func("add", "Adds.", add)}})
		first := h.waitRegistered()
		sh := openShell(t, env, env.Open(t))
		expectReceipt(t, sh.call("flaky_net_tk.add", `{"a":1,"b":2}`), "completed", `{"sum":3}`)

		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		if second := h.waitRegistered(); second == first {
			t.Fatalf("registered again on the same session %s", first)
		}
		expectReceipt(t, sh.call("flaky_net_tk.add", `{"a":2,"b":2}`), "completed", `{"sum":4}`)
	})

	t.Run("StopCancelsCallsStillRunningAfterTheGraceAndDeliversTheirResults", func(t *testing.T) {
		started := make(chan struct{})
		stubborn := hostkit.Func("stubborn", "Runs until the host stops.", func(ctx context.Context, _ hostkit.Call, _ empty) (any, error) {
			close(started)
			<-ctx.Done()
			return nil, errors.New("interrupted by the host's shutdown")
		})
		h := runHost(t, env, func(c *hostkit.Config) { c.StopGrace = 50 * time.Millisecond },
			hostkit.Toolkit{Name: "stubborn_tk", Functions: []hostkit.Function{stubborn}})
		h.waitRegistered()
		sh := openShell(t, env, env.Open(t))
		id := sh.submit("stubborn_tk.stubborn", `{}`)
		receive(t, started)
		if err := h.stop(); err != nil {
			t.Fatalf("Run = %v, want nil after a drain", err)
		}
		// The function's own result arrived: the stream stayed open through the drain.
		expectReceipt(t, sh.wait(id), "failed", `"interrupted by the host's shutdown"`)
		expectReceipt(t, sh.call("stubborn_tk.stubborn", `{}`), "failed", `"Toolkit \"stubborn_tk\" is unavailable: its tool host disconnected"`)
	})

	t.Run("StoppedHostFreesItsToolkitNamesForAnotherHost", func(t *testing.T) {
		tk := hostkit.Toolkit{Name: "handover_tk", Functions: []hostkit.Function{hostkit.Func("add", "Adds.", add)}}
		old := runHost(t, env, func(c *hostkit.Config) { c.HostID = "old" }, tk)
		old.waitRegistered()
		if err := old.stop(); err != nil {
			t.Fatal(err)
		}
		runHost(t, env, func(c *hostkit.Config) { c.HostID = "new" }, tk).waitRegistered()
		expectReceipt(t, openShell(t, env, env.Open(t)).call("handover_tk.add", `{"a":3,"b":4}`), "completed", `{"sum":7}`)
	})
}
