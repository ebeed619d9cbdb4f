package workerhub

import (
	"context"
	"errors"

	workerv1 "github.com/turncli/turncli/gen/turncli/worker/v1"
)

// ServiceConfig is what the WorkerService needs: the Hub its connections join and where their
// job reports go.
type ServiceConfig struct {
	// Hub keeps the connections the service accepts.
	Hub *Hub
	// Jobs receives what workers report about jobs (the jobs manager).
	Jobs JobSink
}

// Service implements WorkerService over a Hub. It is separate from the Hub because the Hub is
// needed to build the engines that receive what workers report (the jobs manager starts jobs
// through it), and the service needs those engines: the Hub is built first, the engines next,
// the service last, so nothing is wired after construction.
type Service struct {
	workerv1.UnimplementedWorkerServiceServer
	hub  *Hub
	jobs JobSink
}

// NewService returns the WorkerService handlers.
func NewService(cfg ServiceConfig) (*Service, error) {
	switch {
	case cfg.Hub == nil:
		return nil, errors.New("workerhub: ServiceConfig.Hub is required")
	case cfg.Jobs == nil:
		return nil, errors.New("workerhub: ServiceConfig.Jobs is required")
	}
	return &Service{hub: cfg.Hub, jobs: cfg.Jobs}, nil
}

// Connect implements WorkerService: it serves one worker connection until it ends.
func (s *Service) Connect(stream workerv1.WorkerService_ConnectServer) error {
	return s.hub.serve(stream, s.jobs)
}

// CheckGrant implements WorkerService: the sandbox proxy's pre-body authority check.
func (s *Service) CheckGrant(ctx context.Context, req *workerv1.CheckGrantRequest) (*workerv1.CheckGrantResponse, error) {
	return s.hub.checkGrant(ctx, req)
}
