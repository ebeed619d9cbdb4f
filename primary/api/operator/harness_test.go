package operator_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/bashexec"
	"github.com/turncli/turncli/internal/faultgrpc"
	"github.com/turncli/turncli/primary/api/operator"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/store/memory"
	"github.com/turncli/turncli/primary/toolkits/testtk"
	"github.com/turncli/turncli/primary/workerhub"
)

// apiEnv is OperatorService over bufconn, behind the real authenticator, over the in-memory
// store, with its REST gateway. Its engines are those of testEngines.
type apiEnv struct {
	srv       *operator.Server
	store     *memory.Store
	jobs      *storeJobs
	approvals *storeApprovals
	responses *response.Manager
	testtk    *testtk.Toolkit
	bus       *events.Bus
	preflight *fakePreflight
	// admin ("ada") and member ("mia") are clients with those operators' credentials.
	admin, member operatorv1.OperatorServiceClient
	// adminToken and memberToken are their credentials, for REST.
	adminToken, memberToken string
	rest                    http.Handler
	lis                     *bufconn.Listener
	// streamEnded receives the status of every streaming call when its handler returns.
	streamEnded chan error
}

// testEngines is a Config over st whose engines are the store-backed doubles of
// engines_test.go (jobs, approvals, prompts, questions) and st itself (allowances, progress,
// shell modes); responses are a real response.Manager over reg whose shells never run, with
// real call approvals over st; the feed is a real events.Bus and the preflight a fakePreflight.
func testEngines(t *testing.T, st store.Store, dir string, reg *catalog.Registry) operator.Config {
	t.Helper()
	responses := response.NewManager(response.Config{Registry: reg, Shells: noShells{}, CallApprovals: &response.CallApprovalConfig{Store: st}})
	t.Cleanup(responses.CloseAll)
	return operator.Config{
		Store:          st,
		Jobs:           &storeJobs{st: st},
		Approvals:      &storeApprovals{st: st, workspace: dir, logDir: filepath.Join(dir, "jobs"), caps: store.JobCaps{Total: 20, PerThread: 3}},
		Prompts:        storePrompts{st},
		Allowances:     st,
		Questions:      storeQuestions{st},
		Progress:       st,
		Responses:      responses,
		Events:         events.New(),
		CallApprovals:  responses.CallApprovals(),
		Workers:        workerhub.New(workerhub.Config{}),
		ShellModes:     st,
		ShellPreflight: &fakePreflight{},
		IdentityLinks:  st,
	}
}

// newServer is operator.NewServer, failing the test on an error.
func newServer(t *testing.T, cfg operator.Config) *operator.Server {
	t.Helper()
	srv, err := operator.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// startAPI starts the service over the engines of testEngines.
func startAPI(t *testing.T) *apiEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st := memory.Open(memory.Options{})
	t.Cleanup(func() { st.Close() })
	e := &apiEnv{
		store:      st,
		adminToken: mustAdd(t, st, "ada", store.RoleAdmin),
	}
	e.memberToken = mustAdd(t, st, "mia", store.RoleMember)

	e.testtk = testtk.New()
	reg := catalog.NewRegistry()
	if err := reg.Register(ctx, e.testtk); err != nil {
		t.Fatal(err)
	}
	cfg := testEngines(t, st, dir, reg)
	cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	e.jobs, e.approvals, e.responses = cfg.Jobs.(*storeJobs), cfg.Approvals.(*storeApprovals), cfg.Responses
	e.bus, e.preflight = cfg.Events, cfg.ShellPreflight.(*fakePreflight)
	e.srv = newServer(t, cfg)
	auth := operator.NewAuthenticator(st)
	e.streamEnded = make(chan error, 16)
	ended := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, ss)
		select {
		case e.streamEnded <- faultgrpc.Status(ss.Context(), nil, "", err): // as the caller will see it
		default:
		}
		return err
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(faultgrpc.UnaryServerInterceptor(nil), auth.UnaryInterceptor()), grpc.ChainStreamInterceptor(faultgrpc.StreamServerInterceptor(nil), auth.StreamInterceptor(), ended))
	operatorv1.RegisterOperatorServiceServer(gs, e.srv)
	lis := bufconn.Listen(1 << 20)
	e.lis = lis
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	e.admin = operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, e.adminToken))
	e.member = operatorv1.NewOperatorServiceClient(dialBufconn(t, lis, e.memberToken))

	// The gateway as the primary mounts it: snake_case JSON, with google.api.HttpBody
	// responses written as their raw bytes.
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{
		Marshaler: &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		},
	}))
	if err := operatorv1.RegisterOperatorServiceHandler(ctx, mux, dialBufconn(t, lis, "")); err != nil {
		t.Fatal(err)
	}
	e.rest = mux
	return e
}

func mustAdd(t *testing.T, st store.Operators, name string, role store.OperatorRole) string {
	t.Helper()
	token, err := operators.Add(context.Background(), st, name, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// dialBufconn connects to lis, sending token as the bearer credential ("" for none).
func dialBufconn(t *testing.T, lis *bufconn.Listener, token string, extra ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}
	if token != "" {
		opts = append(opts, grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), method, req, reply, cc, opts...)
		}), grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), desc, cc, method, opts...)
		}))
	}
	opts = append(opts, extra...)
	conn, err := grpc.NewClient("passthrough:///operator", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// restResponse is what a REST call answered.
type restResponse struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one REST request through the gateway with token as the bearer credential.
func (e *apiEnv) do(t *testing.T, method, path, token, body string) restResponse {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.rest.ServeHTTP(rec, req)
	return restResponse{code: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// testWriter routes logs to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// noShells stands in for the shell launcher of responses whose shells never run: it only
// names an Agent CLI address, so that a test can read a response's grant from its shell
// environment.
type noShells struct{}

func (noShells) Run(context.Context, response.ShellCommand, bashexec.Output) (bashexec.Result, error) {
	return bashexec.Result{}, errors.New("no shells in this test")
}

func (noShells) Release(string, *response.Binding, string) {}

func (noShells) AgentCLIURL(string, *response.Binding) (string, error) {
	return "http://127.0.0.1:9", nil
}
