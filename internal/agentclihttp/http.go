// Package agentclihttp is the HTTP edge of the Agent CLI: the contract's two REST routes served
// by grpc-gateway in front of AgentCLIService, either over a gRPC connection (a worker's sandbox
// proxy, to the primary) or by calling the handlers in the same process (the primary's loopback
// listener). Both use the same front, gateway options and error mapping, so both answer with
// identical status codes, headers and bodies.
//
// It checks the method, then the grant (through an Authenticator, before reading any body),
// then the 64 KiB cap, and maps gRPC codes to HTTP statuses in one place. A 500 says nothing of
// its fault but names the log line that does: the primary's, when the status carries the id of
// a fault the primary hid, else one this edge writes to its process's log. It makes no decision
// of its own about what a grant may do.
package agentclihttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentcliv1 "github.com/turncli/turncli/gen/turncli/agentcli/v1"
	"github.com/turncli/turncli/internal/bearer"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

// The wire of the contract.
const (
	OperationsPath  = "/api/agent-cli/operations"
	CallsPathPrefix = "/api/agent-cli/calls/"
	// WindowHeader carries the caller's window (lower-case, as gRPC metadata).
	WindowHeader = "x-mindroom-agent-cli-window"
	// MaxOperationBytes is the largest operation document accepted.
	MaxOperationBytes = 64 * 1024
)

// Authenticator tells whether a bearer grant may be used on this listener. The HTTP front asks
// it before reading any body.
type Authenticator func(ctx context.Context, token string) bool

// Faults is where an edge writes the failures it answers 500 without the primary having hidden
// them (the primary out of reach, a status with no id): the process's logger (nil discards)
// and whose log it is, as the answer names it (fault.PrimaryLog, fault.WorkerLog).
type Faults struct {
	Log   *slog.Logger
	Owner string
}

// NewHandler serves the two REST routes by forwarding to AgentCLIService over conn (so every
// request passes the gRPC server's interceptors); conn may follow the leader of several
// primaries. It authenticates before reading the body,
// caps the body at 64 KiB, and writes every failure as {"detail": …}.
func NewHandler(ctx context.Context, conn grpc.ClientConnInterface, authenticated Authenticator, faults Faults) (http.Handler, error) {
	mux := newGateway(faults)
	if err := agentcliv1.RegisterAgentCLIServiceHandlerClient(ctx, mux, agentcliv1.NewAgentCLIServiceClient(conn)); err != nil {
		return nil, err
	}
	return &front{gateway: mux, authenticated: authenticated}, nil
}

// NewServerHandler serves the two REST routes as NewHandler does, by calling srv in this
// process instead of forwarding: no gRPC server runs in between, so no interceptor does, and
// srv must do itself what one would (agentcli's Server.OnPath marks the path and maps errors
// with faultgrpc.Status). A parked long poll then holds no gRPC stream, only its HTTP request.
func NewServerHandler(ctx context.Context, srv agentcliv1.AgentCLIServiceServer, authenticated Authenticator, faults Faults) (http.Handler, error) {
	mux := newGateway(faults)
	if err := agentcliv1.RegisterAgentCLIServiceHandlerServer(ctx, mux, srv); err != nil {
		return nil, err
	}
	return &front{gateway: mux, authenticated: authenticated}, nil
}

// newGateway is the gateway both handlers register on: raw canonical bodies, only the window
// header forwarded in and no metadata sent out, and every error written by faults.write or
// writeDetail.
func newGateway(faults Faults) *runtime.ServeMux {
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, rawJSON{}),
		runtime.WithIncomingHeaderMatcher(func(h string) (string, bool) {
			if strings.EqualFold(h, WindowHeader) {
				return WindowHeader, true
			}
			return "", false // Authorization is forwarded by the gateway itself
		}),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithOutgoingTrailerMatcher(func(string) (string, bool) { return "", false }),
		runtime.WithErrorHandler(faults.write),
		runtime.WithRoutingErrorHandler(func(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
			writeDetail(w, code, http.StatusText(code))
		}),
	)
}

// Route is the pattern of the route r asks for, for measurements: one of the contract's two
// routes, or "" for any other path. A call's id is never part of it.
func Route(r *http.Request) string {
	switch {
	case r.URL.Path == OperationsPath:
		return OperationsPath
	case strings.HasPrefix(r.URL.Path, CallsPathPrefix):
		return CallsPathPrefix + "{call_id}"
	}
	return ""
}

// front is the HTTP edge: method, authority and size, in that order, before the gateway.
type front struct {
	gateway       http.Handler
	authenticated Authenticator
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var method string
	switch {
	case r.URL.Path == OperationsPath:
		method = http.MethodPost
	case strings.HasPrefix(r.URL.EscapedPath(), CallsPathPrefix) && !strings.Contains(r.URL.EscapedPath()[len(CallsPathPrefix):], "/"):
		method = http.MethodGet // one path segment, which may hold an escaped "/"
	default:
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	token, ok := bearer.FromHeader(r.Header)
	if !ok || !f.authenticated(r.Context(), token) {
		writeDetail(w, http.StatusUnauthorized, clierr.UnauthenticatedText)
		return
	}
	if method == http.MethodGet && !wellFormedCallID(r.URL.EscapedPath()) {
		// A call id that is not a UUID names no call the caller can see: the same 401, and no
		// routing error that would tell it apart.
		writeDetail(w, http.StatusUnauthorized, clierr.UnauthenticatedText)
		return
	}
	if method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxOperationBytes+1))
		if err != nil {
			writeDetail(w, http.StatusBadRequest, "request body could not be read")
			return
		}
		if len(body) > MaxOperationBytes {
			writeDetail(w, http.StatusRequestEntityTooLarge, clierr.RequestTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	f.gateway.ServeHTTP(w, r)
}

// HTTPStatus maps AgentCLIService codes to HTTP (the table in agent_cli.proto), the one place
// the Agent CLI routes choose a status. FAILED_PRECONDITION is mapped like ABORTED for a proxy
// that forwards to an older primary, which answered these refusals with it.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.Aborted, codes.FailedPrecondition:
		return http.StatusConflict
	case codes.InvalidArgument, codes.ResourceExhausted:
		return http.StatusUnprocessableEntity
	case codes.OutOfRange:
		return http.StatusRequestEntityTooLarge
	case codes.Canceled:
		return 499 // client closed request; nobody reads it
	default:
		return http.StatusInternalServerError
	}
}

// internalText is what failed, as a 500's detail says.
const internalText = "Agent CLI internal error"

// write answers a call's error with its status's HTTP status and message; a 500 only names the
// log line that records its fault, hiding it first when the primary has not.
func (f Faults) write(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	st := status.Convert(err)
	code := HTTPStatus(st.Code())
	msg := st.Message()
	if code == http.StatusInternalServerError {
		id, owner := faultgrpc.HiddenID(st), fault.PrimaryLog
		if id == "" {
			id = fault.Hide(ctx, f.Log, err, "Agent CLI request failed", "route", Route(r), "code", st.Code().String())
			owner = f.Owner
		}
		msg = fault.HiddenMessage(internalText, id, owner)
	}
	writeDetail(w, code, msg)
}

// writeDetail writes the contract's error body.
func writeDetail(w http.ResponseWriter, code int, detail string) {
	body, _ := canonjson.Marshal(map[string]any{"detail": detail})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// rawJSON is the gateway marshaler for the Agent CLI routes: the request body goes to the
// handler untouched (it is read strictly there), and the handler's canonical bytes are the
// response body.
type rawJSON struct{}

func (rawJSON) ContentType(any) string { return "application/json" }

func (rawJSON) Marshal(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return nil, fmt.Errorf("agentcli: cannot marshal %T", v)
}

func (rawJSON) Unmarshal(data []byte, v any) error {
	req, ok := v.(*agentcliv1.OperateRequest)
	if !ok {
		if m, ok := v.(proto.Message); ok {
			return fmt.Errorf("agentcli: cannot decode into %T", m)
		}
		return errors.New("agentcli: unexpected decode target")
	}
	req.OperationJson = append([]byte(nil), data...)
	return nil
}

func (m rawJSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(io.LimitReader(r, MaxOperationBytes+1))
		if err != nil {
			return err
		}
		return m.Unmarshal(data, v)
	})
}

func (m rawJSON) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := m.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

func (rawJSON) Delimiter() []byte { return []byte("\n") }

// wellFormedCallID reports whether an escaped calls path ends in a segment that, unescaped, is
// spelt like a UUID in one of the forms the handlers accept (hex digits, hyphens, braces, urn
// prefix).
func wellFormedCallID(escapedPath string) bool {
	seg, ok := strings.CutPrefix(escapedPath, CallsPathPrefix)
	if !ok {
		return false
	}
	id, err := url.PathUnescape(seg)
	if err != nil || id == "" || len(id) > 64 {
		return false
	}
	for _, c := range strings.TrimPrefix(strings.ToLower(id), "urn:uuid:") {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-' || c == '{' || c == '}') {
			return false
		}
	}
	return true
}
