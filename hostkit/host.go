package hostkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/backoff"
	"github.com/turncli/turncli/internal/leaderconn"
	"github.com/turncli/turncli/internal/outage"
	"github.com/turncli/turncli/internal/telemetry"
)

// Host serves toolkits to a primary. Build it with New, then Run it.
type Host struct {
	cfg      Config
	toolkits []*preparedToolkit
	byName   map[string]*preparedToolkit
}

// preparedToolkit is a validated toolkit and its messages, built once.
type preparedToolkit struct {
	register *toolhostv1.RegisterToolkit
	def      *toolhostv1.ToolkitDefinition
	funcs    map[string]Function
}

// New checks the configuration and the toolkits. It does not connect: Run does.
func New(cfg Config, toolkits ...Toolkit) (*Host, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, byName: make(map[string]*preparedToolkit, len(toolkits))}
	for _, tk := range toolkits {
		p, err := prepare(tk)
		if err != nil {
			return nil, err
		}
		if h.byName[tk.Name] != nil {
			return nil, fmt.Errorf("hostkit: toolkit %q is given twice", tk.Name)
		}
		h.byName[tk.Name] = p
		h.toolkits = append(h.toolkits, p)
	}
	return h, nil
}

func prepare(tk Toolkit) (*preparedToolkit, error) {
	if tk.Name == "" {
		return nil, errors.New("hostkit: a toolkit needs a name")
	}
	p := &preparedToolkit{def: &toolhostv1.ToolkitDefinition{Instructions: tk.Instructions}, funcs: make(map[string]Function, len(tk.Functions))}
	for _, f := range tk.Functions {
		switch {
		case f.err != nil:
			return nil, f.err
		case f.Name == "":
			return nil, fmt.Errorf("hostkit: toolkit %q: a function needs a name", tk.Name)
		case f.Handler == nil:
			return nil, fmt.Errorf("hostkit: toolkit %q: function %q has no handler", tk.Name, f.Name)
		case len(f.InputSchema) > 0 && !json.Valid(f.InputSchema):
			return nil, fmt.Errorf("hostkit: toolkit %q: function %q: input schema is not JSON", tk.Name, f.Name)
		}
		if _, dup := p.funcs[f.Name]; dup {
			return nil, fmt.Errorf("hostkit: toolkit %q: function %q is given twice", tk.Name, f.Name)
		}
		p.funcs[f.Name] = f
		p.def.Functions = append(p.def.Functions, &toolhostv1.Function{
			Name: f.Name, Description: f.Description, InputSchemaJson: string(f.InputSchema), Instructions: f.Instructions,
			Traits: f.Traits.toProto(),
		})
	}
	p.register = &toolhostv1.RegisterToolkit{Name: tk.Name, Description: tk.Description, Deferred: tk.Deferred}
	if !tk.Deferred {
		p.register.Definition = p.def
	}
	return p, nil
}

// Run connects to the primary, registers the toolkits and serves them, reconnecting with
// jittered exponential backoff whenever the connection ends, until ctx ends. Then it drains:
// the primary stops sending calls, running calls get StopGrace to finish (then their context
// is cancelled), and Run returns nil.
//
// Run returns an error without retrying when retrying cannot help: a *RegistrationError (a
// toolkit was refused), or the primary refusing the credential or the protocol.
func (h *Host) Run(ctx context.Context) error {
	tp := h.cfg.TracerProvider
	if tp == nil {
		tel, err := telemetry.FromEnv(ctx, filepath.Base(os.Args[0]))
		if err != nil {
			return fmt.Errorf("hostkit: %w", err)
		}
		defer telemetry.ShutdownWithin(tel, h.cfg.Logger, 5*time.Second)
		tp = tel.TracerProvider()
	}
	tracer := tp.Tracer("github.com/turncli/turncli/hostkit")
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearer{token: h.cfg.Token, secure: h.cfg.TransportCredentials != nil}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
	}, h.cfg.DialOptions...)
	if h.cfg.TransportCredentials != nil {
		opts[0] = grpc.WithTransportCredentials(h.cfg.TransportCredentials)
	}
	conn, err := leaderconn.New(ctx, h.cfg.Address, opts...)
	if err != nil {
		return fmt.Errorf("hostkit: %w", err)
	}
	defer conn.Close()
	client := toolhostv1.NewToolHostServiceClient(conn)

	// Given several primaries, each is tried in turn (a standby answers Unavailable) before
	// backing off.
	lost := outage.New(h.cfg.Logger)
	round := func(ctx context.Context) (bool, error) {
		return conn.Round(ctx, func(ctx context.Context) (bool, error) { return h.session(ctx, client, tracer, lost) }, permanent,
			func(failed string, err error) {
				h.cfg.Logger.Info("trying the next primary", "failed", failed, "err", err, "next", conn.Addr())
			})
	}
	p := backoff.Policy{Min: h.cfg.MinBackoff, Max: h.cfg.MaxBackoff}
	return p.Loop(ctx, round, permanent, lost.Failed)
}

// permanent reports whether err ends Run instead of a reconnect.
func permanent(err error) bool {
	var rejected *RegistrationError
	if errors.As(err, &rejected) {
		return true
	}
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.Unimplemented:
		return true
	}
	return false
}

// bearer sends the runtime credential with every RPC.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
