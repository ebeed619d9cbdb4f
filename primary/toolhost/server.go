package toolhost

import (
	"context"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/fault"
)

// Service serves ToolHostService and keeps the toolkits hosts registered.
type Service struct {
	toolhostv1.UnimplementedToolHostServiceServer
	cfg Config

	// regMu serialises registrations, so a name is checked and claimed in one step.
	regMu sync.Mutex

	mu       sync.Mutex
	closed   bool
	conns    map[string]*conn // live connections by host id
	toolkits map[string]*hostedToolkit
}

// New returns a Service with no hosts.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, conns: make(map[string]*conn), toolkits: make(map[string]*hostedToolkit)}, nil
}

// Connect serves one tool host's stream until it ends.
func (s *Service) Connect(stream toolhostv1.ToolHostService_ConnectServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return fault.New(fault.InvalidArgument, "the first message must be hello")
	}
	if n := utf8.RuneCountInString(hello.GetHostId()); n < 1 || n > 128 || !utf8.ValidString(hello.GetHostId()) {
		return fault.New(fault.InvalidArgument, "hello.host_id must be 1..128 characters")
	}
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(errConnEnded)
	c := &conn{
		svc: s, hostID: hello.GetHostId(), session: uuid.NewString(),
		ctx: ctx, cancel: cancel, out: make(chan *toolhostv1.ConnectResponse, s.cfg.SendQueue),
		calls: make(map[string]*pendingCall), loads: make(map[string]chan *toolhostv1.ToolkitLoaded),
	}
	c.log = s.cfg.Logger.With("host_id", c.hostID, "session", c.session)
	if err := s.attach(c); err != nil {
		return err
	}
	defer s.detach(c)
	if err := stream.Send(&toolhostv1.ConnectResponse{Event: &toolhostv1.ConnectResponse_Welcome{Welcome: &toolhostv1.Welcome{SessionId: c.session}}}); err != nil {
		return err
	}
	c.log.Info("tool host connected")
	defer c.log.Info("tool host disconnected")

	received := make(chan error, 1)
	go func() { received <- c.receive(stream.Recv) }()
	for {
		select {
		case msg := <-c.out:
			if err := stream.Send(msg); err != nil {
				return err
			}
		case err := <-received:
			switch {
			case errors.Is(err, io.EOF):
				return nil // the host closed its side (after draining, or simply leaving)
			case errors.Is(err, errProtocol):
				c.log.Warn("tool host broke the protocol", "err", err)
				return fault.New(fault.InvalidArgument, err.Error())
			}
			return err
		case <-ctx.Done():
			switch cause := context.Cause(ctx); {
			case errors.Is(cause, errReplaced):
				return fault.New(fault.Conflict, "replaced by a newer stream with the same host_id")
			case errors.Is(cause, errStopping):
				return errStopping
			case errors.Is(cause, errNotRead):
				c.log.Warn("tool host disconnected: it does not read its stream")
				return fault.New(fault.LimitExceeded, "the tool host does not read its stream")
			default:
				return ctx.Err()
			}
		}
	}
}

// attach records c as its host's live connection, replacing (and ending) an older one.
func (s *Service) attach(c *conn) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errStopping
	}
	old := s.conns[c.hostID]
	s.conns[c.hostID] = c
	s.mu.Unlock()
	if old != nil {
		old.log.Info("tool host stream replaced")
		old.cancel(errReplaced)
		s.releaseAll(old, whyDisconnected)
	}
	return nil
}

// detach ends c: its waiters fail, its toolkits become unavailable.
func (s *Service) detach(c *conn) {
	c.cancel(errConnEnded) // first: a registration racing with this one sees the end
	s.mu.Lock()
	if s.conns[c.hostID] == c {
		delete(s.conns, c.hostID)
	}
	s.mu.Unlock()
	s.releaseAll(c, whyDisconnected)
}

// releaseAll makes every toolkit c serves unavailable for why. Call it after c.ctx ended or c
// began draining, so no registration of c can attach a toolkit afterwards unseen.
func (s *Service) releaseAll(c *conn, why string) {
	s.mu.Lock()
	toolkits := make([]*hostedToolkit, 0, len(s.toolkits))
	for _, t := range s.toolkits {
		toolkits = append(toolkits, t)
	}
	s.mu.Unlock()
	for _, t := range toolkits {
		t.release(c, why)
	}
}

// drain releases c's toolkits for other hosts; its calls already running go on.
func (s *Service) drain(c *conn) {
	s.regMu.Lock() // no registration of c is half done
	c.setDraining()
	s.regMu.Unlock()
	c.log.Info("tool host draining")
	s.releaseAll(c, whyStopping)
}

// Close ends every host's stream with UNAVAILABLE and refuses new ones. Call it when the primary
// stops, after responses are closed (so their calls have been cancelled).
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.cancel(errStopping)
	}
}
