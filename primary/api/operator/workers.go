package operator

import (
	"cmp"
	"context"
	"slices"

	"google.golang.org/protobuf/types/known/timestamppb"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/pagetoken"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/workerhub"
)

// Workers is the worker hub as the operator API sees it.
type Workers interface {
	// Connected lists the connected workers, ordered by key and then id.
	Connected() []workerhub.WorkerInfo
}

// ListWorkers implements OperatorService: one page of the connected workers in (key, id)
// order, each with the running jobs the store records on it.
func (s *Server) ListWorkers(ctx context.Context, req *operatorv1.ListWorkersRequest) (*operatorv1.ListWorkersResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	key := req.GetWorkerKey()
	pg := page("workers", key)
	after, err := pg.position(req.GetPageToken(), 2)
	if err != nil {
		return nil, err
	}
	connected := s.workers.Connected()
	if key != "" {
		connected = slices.DeleteFunc(connected, func(w workerhub.WorkerInfo) bool { return w.Key != key })
	}
	if after != nil {
		start, _ := slices.BinarySearchFunc(connected, after, func(w workerhub.WorkerInfo, pos pagetoken.Position) int {
			if c := cmp.Or(cmp.Compare(w.Key, pos[0]), cmp.Compare(w.ID, pos[1])); c <= 0 {
				return -1
			}
			return 1
		})
		connected = connected[start:]
	}
	var next string
	if len(connected) > limit {
		connected = connected[:limit]
		last := connected[limit-1]
		next = pg.next(last.Key, last.ID)
	}
	jobs, err := s.runningJobsByWorker(ctx)
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListWorkersResponse{Workers: make([]*operatorv1.ConnectedWorker, 0, len(connected)), NextPageToken: next}
	for _, w := range connected {
		resp.Workers = append(resp.Workers, &operatorv1.ConnectedWorker{
			WorkerKey: w.Key, WorkerId: w.ID, Capacity: uint32(w.Capacity), RunningCommands: uint32(w.Running),
			RunningJobIds: jobs[w.ID], ConnectedAt: timestamppb.New(w.ConnectedAt), SessionId: w.Session,
		})
	}
	return resp, nil
}

// runningJobsByWorker reads the running jobs, a page at a time, and returns their ids by the
// worker each runs on, oldest first.
func (s *Server) runningJobsByWorker(ctx context.Context) (map[string][]int64, error) {
	out := make(map[string][]int64)
	f := store.JobFilter{Status: store.JobRunning, Limit: maxPageSize}
	for {
		page, err := s.jobs.Page(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, j := range page {
			if j.WorkerID != "" {
				out[j.WorkerID] = append(out[j.WorkerID], j.ID)
			}
		}
		if len(page) < f.Limit {
			break
		}
		f.BeforeID = page[len(page)-1].ID
	}
	for _, ids := range out {
		slices.Sort(ids) // pages come newest first
	}
	return out, nil
}
