// Package testmcp is a deterministic MCP server, written with the official Go SDK, that tests
// mount through the primary's MCP bridge: in process over streamable HTTP (NewServer), or as a
// real subprocess over stdio (the testmcp command under cmd/testmcp, built by Build).
//
// Its tools return text (greet), structured content (add), several blocks (multi), media (media),
// a tool error (boom), the process id (instance), an environment variable (env) and the MCP
// revision its request speaks (protocol). sleep blocks
// until its call is cancelled; hang ignores cancellation and blocks until the process ends or,
// in process, until Stop. wait_sleeping, wait_cancelled and wait_hanging let a test wait for
// sleep calls to start or be cancelled, or hang calls to start, without sleeping itself. In the
// subprocess only, crash exits the process in the middle of a call and spawn starts a child
// process. Filler tools and a small page size force tools/list pagination, and broken_schema has
// an input schema that cannot be compiled. Options add more tools a client must leave out one at
// a time (OddTools) and tools whose schemas nest to given depths (SchemaDepths), and narrow the
// MCP revisions served (ProtocolVersions), so that one server speaks only 2025-11-25 (the
// initialize handshake) and another only 2026-07-28 (stateless requests).
//
// It is test support only; nothing in production imports it.
package testmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Fillers is how many filler tools (filler_00 …) the server offers besides its real tools.
const Fillers = 12

// Instructions is what the server tells clients at initialisation.
const Instructions = "testmcp: deterministic tools for the MCP bridge tests."

// PixelPNG is the 1x1 PNG the media tool returns.
var PixelPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
	0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// Options shape a server.
type Options struct {
	// PageSize is the tools/list page size (default 5, so the tools span several pages).
	PageSize int
	// Exit, when set (the subprocess), adds the crash tool, which calls it with status 3
	// mid-call, and the spawn tool.
	Exit func(code int)
	// OddTools adds tools a client must leave out one at a time: OddName, whose name holds a
	// control character; too_deep, whose input schema nests 65 levels deep; and, on the last
	// page of tools/list, a second tool named greet (DuplicateDescription).
	OddTools bool
	// SchemaDepths adds, for each depth d, the tool depth_<d> whose input schema nests
	// d levels deep (NestedSchema).
	SchemaDepths []int
	// ProtocolVersions, when set, are the only MCP revisions served: a request of another is
	// refused (server/discover of 2026-07-28 with -32022 when that revision is left out), and
	// initialize answers with one of these.
	ProtocolVersions []string
}

// OddName is the name of the odd tool with a control character (BEL) in it.
const OddName = "ring\abell"

// DuplicateDescription describes the second greet of OddTools.
const DuplicateDescription = "A second tool named greet, listed after the first."

// Server is a test MCP server and the state tests observe.
type Server struct {
	*mcp.Server

	mu        sync.Mutex
	cond      *sync.Cond
	sleeping  int // sleep calls started
	cancelled int // sleep calls cancelled
	hanging   int // hang calls started

	stopOnce sync.Once
	stop     chan struct{} // closed by Stop: hang calls return
}

// NewServer returns the test server.
func NewServer(opts Options) *Server {
	if opts.PageSize == 0 {
		opts.PageSize = 5
	}
	s := &Server{Server: mcp.NewServer(&mcp.Implementation{Name: "testmcp", Version: "1.0.0"},
		&mcp.ServerOptions{PageSize: opts.PageSize, Instructions: Instructions, SupportedProtocolVersions: opts.ProtocolVersions})}
	s.cond = sync.NewCond(&s.mu)
	s.stop = make(chan struct{})

	type greetIn struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "greet", Description: "Greet someone by name."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return text("Hello, " + in.Name + "!"), nil, nil
		})

	type addIn struct {
		A int64 `json:"a" jsonschema:"first addend"`
		B int64 `json:"b" jsonschema:"second addend"`
	}
	type addOut struct {
		Sum int64 `json:"sum"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "add", Description: "Add two integers; structured result."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})

	type none struct{}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "boom", Description: "Always fail with a tool error."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("boom: the tool failed on purpose")
		})

	mcp.AddTool(s.Server, &mcp.Tool{Name: "multi", Description: "Return two text blocks."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}, nil, nil
		})

	mcp.AddTool(s.Server, &mcp.Tool{Name: "media", Description: "Return a caption, an image and a sound."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a pixel"},
				&mcp.ImageContent{MIMEType: "image/png", Data: PixelPNG},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			}}, nil, nil
		})

	type instanceOut struct {
		PID int `json:"pid"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "instance", Description: "Return the server's process id."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, instanceOut, error) {
			return nil, instanceOut{PID: os.Getpid()}, nil
		})

	type envIn struct {
		Name string `json:"name"`
	}
	type envOut struct {
		Set   bool   `json:"set"`
		Value string `json:"value"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "env", Description: "Report an environment variable of the server process."},
		func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, envOut, error) {
			v, ok := os.LookupEnv(in.Name)
			return nil, envOut{Set: ok, Value: v}, nil
		})

	type protocolOut struct {
		Version string `json:"version"`
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "protocol", Description: "Return the MCP revision the request speaks."},
		func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, protocolOut, error) {
			return nil, protocolOut{Version: req.ProtocolVersion()}, nil
		})

	mcp.AddTool(s.Server, &mcp.Tool{Name: "trace_meta", Description: "Return the traceparent and tracestate of this request's _meta."},
		func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, map[string]any, error) {
			meta := map[string]any{}
			for _, k := range []string{"traceparent", "tracestate"} {
				if v, ok := req.Params.Meta[k]; ok {
					meta[k] = v
				}
			}
			return nil, meta, nil
		})

	mcp.AddTool(s.Server, &mcp.Tool{Name: "sleep", Description: "Block until the call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.sleeping++
			s.cond.Broadcast()
			s.mu.Unlock()
			<-ctx.Done()
			s.mu.Lock()
			s.cancelled++
			s.cond.Broadcast()
			s.mu.Unlock()
			return nil, nil, ctx.Err()
		})

	mcp.AddTool(s.Server, &mcp.Tool{Name: "hang", Description: "Block until the server stops, ignoring cancellation."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.hanging++
			s.cond.Broadcast()
			s.mu.Unlock()
			<-s.stop
			return text("released"), nil, nil
		})

	type waitIn struct {
		Count int `json:"count"`
	}
	type waitOut struct {
		Count int `json:"count"`
	}
	waitFor := func(counter *int) mcp.ToolHandlerFor[waitIn, waitOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in waitIn) (*mcp.CallToolResult, waitOut, error) {
			stop := context.AfterFunc(ctx, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
			defer stop()
			s.mu.Lock()
			defer s.mu.Unlock()
			for *counter < in.Count && ctx.Err() == nil {
				s.cond.Wait()
			}
			return nil, waitOut{Count: *counter}, ctx.Err()
		}
	}
	mcp.AddTool(s.Server, &mcp.Tool{Name: "wait_sleeping", Description: "Wait until count sleep calls have started."}, waitFor(&s.sleeping))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "wait_cancelled", Description: "Wait until count sleep calls were cancelled."}, waitFor(&s.cancelled))
	mcp.AddTool(s.Server, &mcp.Tool{Name: "wait_hanging", Description: "Wait until count hang calls have started."}, waitFor(&s.hanging))

	if opts.Exit != nil {
		mcp.AddTool(s.Server, &mcp.Tool{Name: "crash", Description: "Exit the server process in the middle of the call."},
			func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
				opts.Exit(3)
				return nil, nil, nil
			})
		type spawnOut struct {
			PID int `json:"pid"`
		}
		mcp.AddTool(s.Server, &mcp.Tool{Name: "spawn", Description: "Start a child process (sleep 1000) and return its pid."},
			func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, spawnOut, error) {
				cmd := exec.Command("sleep", "1000")
				if err := cmd.Start(); err != nil {
					return nil, spawnOut{}, err
				}
				go func() { _ = cmd.Wait() }()
				return nil, spawnOut{PID: cmd.Process.Pid}, nil
			})
	}

	// A schema no validator can compile: a client must skip this tool, not the whole server.
	s.Server.AddTool(&mcp.Tool{Name: "broken_schema", Description: "A tool whose input schema refers to nothing.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("unreachable"), nil
		})

	if opts.OddTools {
		s.Server.AddTool(&mcp.Tool{Name: OddName, Description: "A tool whose name holds a control character.",
			InputSchema: json.RawMessage(`{"type":"object"}`)}, named(OddName))
		s.Server.AddTool(&mcp.Tool{Name: "too_deep", Description: "A tool whose input schema nests 65 levels deep.",
			InputSchema: NestedSchema(65)}, named("too_deep"))
		s.Server.AddReceivingMiddleware(listTwice)
	}
	for _, d := range opts.SchemaDepths {
		name := fmt.Sprintf("depth_%d", d)
		s.Server.AddTool(&mcp.Tool{Name: name, Description: fmt.Sprintf("A tool whose input schema nests %d levels deep.", d),
			InputSchema: NestedSchema(d)}, named(name))
	}

	for i := range Fillers {
		mcp.AddTool(s.Server, &mcp.Tool{Name: fmt.Sprintf("filler_%02d", i), Description: "A filler tool that makes tools/list paginate."},
			func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
				return text("filler"), nil, nil
			})
	}
	return s
}

// named is a handler that answers with the tool's name.
func named(name string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(name), nil }
}

// listTwice adds a second greet to the last page of tools/list, as a server that lists a name
// twice does (the SDK's own registry cannot hold two tools of one name).
func listTwice(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && list.NextCursor == "" {
			list.Tools = append(slices.Clip(list.Tools), &mcp.Tool{Name: "greet", Description: DuplicateDescription,
				InputSchema: map[string]any{"type": "object"}})
		}
		return res, err
	}
}

// NestedSchema is an object schema whose arrays and objects nest exactly depth levels (at least
// 3): each level of properties adds two, and the innermost schema is {} (one level) or
// {"type":["object"]} (two).
func NestedSchema(depth int) json.RawMessage {
	s := `{}`
	if depth%2 == 0 {
		s = `{"type":["object"]}`
	}
	for range (depth - 1) / 2 {
		s = `{"type":"object","properties":{"x":` + s + `}}`
	}
	return json.RawMessage(s)
}

// Stop returns every hang call, so that no handler of an in-process server outlives its test.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Cancelled reports how many sleep calls have been cancelled.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Build builds the testmcp command into a directory removed at the test's cleanup and returns
// its path.
func Build(t testing.TB) string {
	t.Helper()
	path, err := BuildTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildTo builds the testmcp command into dir and returns its path.
func BuildTo(dir string) (string, error) {
	out := filepath.Join(dir, "testmcp")
	cmd := exec.Command("go", "build", "-o", out, "github.com/turncli/turncli/internal/testmcp/cmd/testmcp")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build testmcp: %v\n%s", err, msg)
	}
	return out, nil
}
