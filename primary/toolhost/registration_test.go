package toolhost_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/testenv"
)

func TestRegistration(t *testing.T) {
	env := testenv.Start(t)

	t.Run("EagerToolkitIsListedAndDescribedWithItsSchema", func(t *testing.T) {
		h := connectRaw(t, env, "host-eager")
		h.mustRegister(eager("eager_tk", fn("echo", `{"type":"object","properties":{"x":{"type":"integer"}}}`)))
		sh := openShell(t, env, env.Open(t), "bash-1")
		_, list := sh.cli("tools", "search", "eager_tk")
		if got := canon(t, list["items"]); got != `[{"description":"Function echo.","function":"echo","toolkit":"eager_tk"}]` {
			t.Errorf("search items = %s", got)
		}
		_, d := sh.cli("tools", "describe", "eager_tk.echo")
		if got := canon(t, d["input_schema"]); got != `{"properties":{"x":{"type":"integer"}},"type":"object"}` {
			t.Errorf("input_schema = %s", got)
		}
		if got := canon(t, d["instructions"]); got != `["Instructions of eager_tk."]` {
			t.Errorf("instructions = %s", got)
		}
	})

	t.Run("DeferredToolkitIsLoadedOnceOnFirstDescribeAndNeverByListOrSearch", func(t *testing.T) {
		h := connectRaw(t, env, "host-deferred")
		h.mustRegister(&toolhostv1.RegisterToolkit{Name: "lazy_tk", Description: "Loaded late.", Deferred: true})
		sh := openShell(t, env, env.Open(t), "bash-1")
		_, list := sh.cli("tools", "list", "--limit", "1000")
		found := false
		for _, it := range list["items"].([]any) {
			if item := it.(map[string]any); item["toolkit"] == "lazy_tk" {
				found = canon(t, item) == `{"deferred":true,"description":"Loaded late.`+
					" (not loaded yet: `mindroom-agent tools describe lazy_tk` loads it and names its functions)"+`","toolkit":"lazy_tk"}`
			}
		}
		if !found {
			t.Errorf("list does not show lazy_tk as one deferred item: %v", list["items"])
		}
		sh.cli("tools", "search", "late")

		// The describe blocks until the host answers the load: run it beside the host.
		described := make(chan map[string]any, 1)
		go func() {
			_, d := sh.cli("tools", "describe", "lazy_tk.ping")
			described <- d
		}()
		// List and search came first: had they loaded the toolkit, that load would come first.
		load := h.next().GetLoad()
		if load.GetName() != "lazy_tk" || load.GetLoadId() == "" {
			t.Fatalf("first message after list, search and describe = %v, want a load of lazy_tk", load)
		}
		h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Loaded{Loaded: &toolhostv1.ToolkitLoaded{
			LoadId: load.GetLoadId(),
			Outcome: &toolhostv1.ToolkitLoaded_Definition{Definition: &toolhostv1.ToolkitDefinition{
				Functions: []*toolhostv1.Function{fn("ping", `{"type":"object","additionalProperties":false}`)},
			}},
		}}})
		if d := <-described; d["function"] != "ping" || canon(t, d["input_schema"]) != `{"additionalProperties":false,"type":"object"}` {
			t.Fatalf("describe = %v", d)
		}
		sh.cli("tools", "describe", "lazy_tk.ping")
		id := sh.submit("lazy_tk.ping", `{}`)
		call := h.nextCall() // not a second load
		h.reply(call.GetCallId(), `{"pong":true}`)
		expectReceipt(t, sh.wait(id), "completed", `{"pong":true}`)
		entry, _ := env.Primary.Internals().Registry.Lookup("lazy_tk")
		if n := entry.Loads(); n != 1 {
			t.Errorf("loads = %d, want 1", n)
		}
	})

	t.Run("FailedLoadFailsTheDescribeAndIsAskedAgainNextTime", func(t *testing.T) {
		h := connectRaw(t, env, "host-failing-load")
		h.mustRegister(&toolhostv1.RegisterToolkit{Name: "flaky_tk", Description: "Fails to load once.", Deferred: true})
		sh := openShell(t, env, env.Open(t), "bash-1")
		answer := func(outcome *toolhostv1.ToolkitLoaded) {
			load := h.next().GetLoad()
			outcome.LoadId = load.GetLoadId()
			h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Loaded{Loaded: outcome}})
		}
		type result struct {
			code int
			out  map[string]any
		}
		describe := func() chan result {
			done := make(chan result, 1)
			go func() {
				code, out := sh.cli("tools", "describe", "flaky_tk.f")
				done <- result{code, out}
			}()
			return done
		}
		first := describe()
		answer(&toolhostv1.ToolkitLoaded{Outcome: &toolhostv1.ToolkitLoaded_Error{Error: "database is warming up"}})
		if r := <-first; r.code != 2 || !strings.Contains(r.out["error"].(string), "database is warming up") {
			t.Fatalf("describe after a failed load = %d %v", r.code, r.out)
		}
		second := describe()
		answer(&toolhostv1.ToolkitLoaded{Outcome: &toolhostv1.ToolkitLoaded_Definition{Definition: &toolhostv1.ToolkitDefinition{
			Functions: []*toolhostv1.Function{fn("f", anyObject)},
		}}})
		if r := <-second; r.code != 0 || r.out["function"] != "f" {
			t.Fatalf("describe after a good load = %d %v", r.code, r.out)
		}
	})

	t.Run("BuiltInToolkitNamesAreReserved", func(t *testing.T) {
		h := connectRaw(t, env, "host-reserved")
		for _, name := range []string{"shell", "test", "test_deferred"} {
			r := h.register(eager(name, fn("f", anyObject)))
			if r.GetRejection().GetReason() != toolhostv1.RejectionReason_REJECTION_REASON_RESERVED ||
				!strings.Contains(r.GetRejection().GetMessage(), "built into the primary") {
				t.Errorf("register %s = %v, want RESERVED", name, r)
			}
		}
	})

	t.Run("SecondLiveHostRegisteringTheSameNameIsRefused", func(t *testing.T) {
		a := connectRaw(t, env, "host-a")
		a.mustRegister(eager("shared_tk", fn("f", anyObject)))
		b := connectRaw(t, env, "host-b")
		r := b.register(eager("shared_tk", fn("f", anyObject)))
		if r.GetRejection().GetReason() != toolhostv1.RejectionReason_REJECTION_REASON_NAME_TAKEN ||
			r.GetRejection().GetMessage() != `toolkit "shared_tk" is already served by tool host "host-a"` {
			t.Fatalf("second host's register = %v, want NAME_TAKEN naming host-a", r)
		}
		// A refusal does not end the stream: the host may register other toolkits.
		b.mustRegister(eager("other_tk", fn("f", anyObject)))
		if r := a.register(eager("shared_tk", fn("f", anyObject))); r.GetRejection().GetReason() != toolhostv1.RejectionReason_REJECTION_REASON_NAME_TAKEN {
			t.Fatalf("registering twice on one stream = %v, want NAME_TAKEN", r)
		}
	})

	t.Run("MalformedRegistrationsAreRefusedAsInvalid", func(t *testing.T) {
		h := connectRaw(t, env, "host-invalid")
		fifo := filepath.Join(t.TempDir(), "fifo.json") // nobody writes it: opening it would block
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			req  *toolhostv1.RegisterToolkit
			want string
		}{
			{"SchemaThatIsNotJSON", eager("bad_schema_tk", fn("f", `{"type":`)), "input schema"},
			{"SchemaThatIsNotASchema", eager("bad_schema2_tk", fn("f", `{"type":12}`)), "input schema"},
			{"SchemaReferringToAFile", eager("ref_file_tk", fn("f", `{"$ref":"file:///etc/hostname"}`)), "cannot refer to documents outside itself"},
			{"SchemaReferringToAFIFO", eager("ref_fifo_tk", fn("f", `{"$ref":"file://`+fifo+`"}`)), "cannot refer to documents outside itself"},
			{"FunctionDefinedTwice", eager("dup_fn_tk", fn("f", anyObject), fn("f", anyObject)), "defined twice"},
			{"EmptyName", eager("", fn("f", anyObject)), "1..128 characters"},
			{"DeferredWithDefinition", &toolhostv1.RegisterToolkit{Name: "d_tk", Deferred: true, Definition: &toolhostv1.ToolkitDefinition{}}, "must not send its definition"},
			{"EagerWithoutDefinition", &toolhostv1.RegisterToolkit{Name: "e_tk"}, "needs its definition"},
		} {
			r := h.register(tc.req)
			if r.GetRejection().GetReason() != toolhostv1.RejectionReason_REJECTION_REASON_INVALID || !strings.Contains(r.GetRejection().GetMessage(), tc.want) {
				t.Errorf("%s: register = %v, want INVALID mentioning %q", tc.name, r, tc.want)
			}
		}
		if _, listed := env.Primary.Internals().Registry.Lookup("bad_schema_tk"); listed {
			t.Errorf("a refused toolkit was added to the catalog")
		}
		// Nothing refused holds the registry: the next host registers.
		connectRaw(t, env, "host-after-invalid").mustRegister(eager("after_invalid_tk", fn("f", anyObject)))
	})

	t.Run("NewStreamWithTheSameHostIDReplacesTheOldOne", func(t *testing.T) {
		old := connectRaw(t, env, "host-replaced")
		old.mustRegister(eager("replaced_tk", fn("f", anyObject)))
		fresh := connectRaw(t, env, "host-replaced")
		if code := status.Code(old.end()); code != codes.Aborted {
			t.Errorf("old stream ended with %v, want Aborted", code)
		}
		fresh.mustRegister(eager("replaced_tk", fn("f", anyObject)))
	})

	t.Run("FirstMessageMustBeHello", func(t *testing.T) {
		h := openRaw(t, env.Conn)
		h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Register{Register: eager("early_tk")}})
		if err := h.end(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("stream ended with %v, want InvalidArgument", err)
		}
	})

	t.Run("SecondHelloBreaksTheProtocol", func(t *testing.T) {
		h := connectRaw(t, env, "host-twice")
		h.send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Hello{Hello: &toolhostv1.Hello{HostId: "host-twice"}}})
		if err := h.end(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("stream ended with %v, want InvalidArgument", err)
		}
	})

	t.Run("StreamWithoutTheRuntimeCredentialIsUnauthenticated", func(t *testing.T) {
		conn, err := grpc.NewClient("passthrough:///primary",
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return env.DialPrimary(ctx, addr) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		h := openRaw(t, conn)
		// The primary may refuse the stream before the hello is sent; Recv reports why.
		_ = h.stream.Send(&toolhostv1.ConnectRequest{Event: &toolhostv1.ConnectRequest_Hello{Hello: &toolhostv1.Hello{HostId: "intruder"}}})
		if err := h.end(); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("stream ended with %v, want Unauthenticated", err)
		}
	})
}
