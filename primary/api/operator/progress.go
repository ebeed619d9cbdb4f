package operator

import (
	"context"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/store"
)

// Progress is the engine behind ListProgress: it keeps each response's latest report_progress
// snapshot.
type Progress interface {
	// ListProgress returns the snapshots matching f, most recently updated first.
	ListProgress(ctx context.Context, f store.ProgressFilter) ([]store.ProgressSnapshot, error)
}

// ListProgress implements OperatorService.
func (s *Server) ListProgress(ctx context.Context, req *operatorv1.ListProgressRequest) (*operatorv1.ListProgressResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	channel, thread, err := conversationFilter(req.GetConversation())
	if err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	pg := page("progress", req.GetResponseId(), channel, thread)
	at, key, err := pg.timeKey(req.GetPageToken(), 1)
	if err != nil {
		return nil, err
	}
	f := store.ProgressFilter{ResponseID: req.GetResponseId(), Channel: channel, Thread: thread, Limit: limit}
	if key != nil {
		f.After = store.ProgressPosition{UpdatedAt: at, ResponseID: key[0]}
	}
	list, err := s.progress.ListProgress(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListProgressResponse{Snapshots: make([]*operatorv1.ProgressSnapshot, 0, len(list))}
	for _, p := range list {
		resp.Snapshots = append(resp.Snapshots, &operatorv1.ProgressSnapshot{
			ResponseId:   p.ResponseID,
			Conversation: conversationToProto(p.Channel, p.Thread),
			Agent:        p.Agent,
			Requester:    p.Requester,
			Title:        p.Title,
			StepsJson:    string(p.Steps),
			UpdatedAt:    timestamp(p.UpdatedAt),
		})
	}
	if len(list) == limit {
		last := list[len(list)-1]
		resp.NextPageToken = pg.nextTime(last.UpdatedAt, last.ResponseID)
	}
	return resp, nil
}
