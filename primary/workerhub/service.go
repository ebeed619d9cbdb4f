package workerhub

import (
	"context"
	"errors"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
	"github.com/turncli/turncli/internal/clierr"
	"github.com/turncli/turncli/primary/jobs"
	"github.com/turncli/turncli/primary/response"
)

// ServiceConfig is what the WorkerService needs: the Hub its connections join, where their
// job reports go, and who says whether a grant a sandbox proxy presents is usable.
type ServiceConfig struct {
	// Hub keeps the connections the service accepts.
	Hub *Hub
	// Jobs receives what workers report about jobs (the jobs manager).
	Jobs jobs.WorkerSink
	// Grants checks the grants sandbox proxies present (the response manager).
	Grants GrantChecker
}

// GrantChecker resolves a grant presented on a path (response.Manager's Authenticate): ok is
// false when the grant is unknown, revoked, or not usable on that path.
type GrantChecker interface {
	Authenticate(token string, p response.Path) (r *response.Response, ok bool)
}

// Service implements WorkerService over a Hub. It is separate from the Hub because the Hub is
// needed to build the engines the service depends on (responses run commands through it, the
// jobs manager starts jobs through it): the Hub is built first, those engines next, the
// service last, so nothing is wired after construction.
type Service struct {
	workerv1.UnimplementedWorkerServiceServer
	hub    *Hub
	jobs   jobs.WorkerSink
	grants GrantChecker
}

// NewService returns the WorkerService handlers.
func NewService(cfg ServiceConfig) (*Service, error) {
	switch {
	case cfg.Hub == nil:
		return nil, errors.New("workerhub: ServiceConfig.Hub is required")
	case cfg.Jobs == nil:
		return nil, errors.New("workerhub: ServiceConfig.Jobs is required")
	case cfg.Grants == nil:
		return nil, errors.New("workerhub: ServiceConfig.Grants is required")
	}
	return &Service{hub: cfg.Hub, jobs: cfg.Jobs, grants: cfg.Grants}, nil
}

// Connect implements WorkerService: it serves one worker connection until it ends.
func (s *Service) Connect(stream workerv1.WorkerService_ConnectServer) error {
	return s.hub.serve(stream, s.jobs)
}

// CheckGrant implements WorkerService: the sandbox proxy's pre-body authority check.
// The grant must be usable through the calling worker, which must be connected.
func (s *Service) CheckGrant(ctx context.Context, req *workerv1.CheckGrantRequest) (*workerv1.CheckGrantResponse, error) {
	ident, err := s.hub.cfg.Credentials.authenticate(ctx)
	if err != nil {
		return nil, err
	}
	if !s.hub.connected(ident) {
		return nil, clierr.ErrUnauthenticated
	}
	if _, ok := s.grants.Authenticate(req.GetGrant(), response.Path{WorkerKey: ident.Key, WorkerID: ident.ID}); !ok {
		return nil, clierr.ErrUnauthenticated
	}
	return &workerv1.CheckGrantResponse{}, nil
}
