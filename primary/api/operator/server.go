package operator

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/primary/events"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/shellmode"
	"github.com/turncli/turncli/primary/store"
)

// Store is what the service reads and writes itself. Approvals are read here and decided
// through Approvals.
type Store interface {
	store.ConversationModes
	store.Conversations
	store.AuditLog
	// Approval and ListApprovals are store.Approvals' readers.
	Approval(ctx context.Context, id int64) (store.Approval, error)
	ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]store.Approval, error)
}

// Server implements OperatorService. Its calls must pass the Authenticator's interceptor.
type Server struct {
	operatorv1.UnimplementedOperatorServiceServer
	store         Store
	jobs          Jobs
	approvals     Approvals
	prompts       Prompts
	allowances    Allowances
	questions     Questions
	progress      Progress
	responses     *response.Manager
	events        *events.Bus
	shellModes    *shellModes
	callApprovals CallApprovals
	workers       Workers
	identityLinks store.IdentityLinks
	logger        *slog.Logger

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: every watch ends
}

// NewServer returns the service over the engines of cfg, every one of which it requires.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{
		store: cfg.Store, jobs: cfg.Jobs, approvals: cfg.Approvals, prompts: cfg.Prompts, allowances: cfg.Allowances,
		questions: cfg.Questions, progress: cfg.Progress, responses: cfg.Responses, events: cfg.Events,
		shellModes:    &shellModes{store: cfg.ShellModes, modes: shellmode.NewModes(cfg.ShellModes, cfg.ShellPreflight, cfg.Logger)},
		callApprovals: cfg.CallApprovals, workers: cfg.Workers, identityLinks: cfg.IdentityLinks, logger: cfg.Logger, closed: make(chan struct{}),
	}, nil
}

// Close ends every WatchEvents stream with UNAVAILABLE and refuses new ones, so that a
// stopping primary's graceful stop does not wait for watchers. Every other method keeps
// working. Closing twice is harmless.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
}

// caller returns the authenticated operator, requiring admin when admin is set.
func caller(ctx context.Context, admin bool, what string) (store.Operator, error) {
	op, ok := FromContext(ctx)
	if !ok {
		return store.Operator{}, errUnauthenticated
	}
	if admin && op.Role != store.RoleAdmin {
		return store.Operator{}, fault.Newf(fault.PermissionDenied, "only an admin can %s; operator %q is a %s", what, op.Name, op.Role)
	}
	return op, nil
}

// WhoAmI implements OperatorService.
func (s *Server) WhoAmI(ctx context.Context, _ *operatorv1.WhoAmIRequest) (*operatorv1.WhoAmIResponse, error) {
	op, err := caller(ctx, false, "")
	if err != nil {
		return nil, err
	}
	return &operatorv1.WhoAmIResponse{Name: op.Name, Role: roleToProto(op.Role)}, nil
}

// SetConversationMode implements OperatorService.
func (s *Server) SetConversationMode(ctx context.Context, req *operatorv1.SetConversationModeRequest) (*operatorv1.SetConversationModeResponse, error) {
	op, err := caller(ctx, true, "set a conversation mode")
	if err != nil {
		return nil, err
	}
	mode, ok := modeFromProto[req.GetMode()]
	if !ok {
		return nil, fault.New(fault.InvalidArgument, "mode must be MODE_ASK, MODE_AUTO or MODE_ADMIN")
	}
	setting, err := s.store.SetConversationMode(ctx, req.GetConversation().GetChannel(), req.GetConversation().GetThread(), mode, op.Name)
	if err != nil {
		return nil, err
	}
	s.logger.Info("conversation mode set", "operator", op.Name, "channel", req.GetConversation().GetChannel(),
		"thread", req.GetConversation().GetThread(), "mode", string(mode))
	return &operatorv1.SetConversationModeResponse{Setting: settingToProto(setting)}, nil
}

// GetConversationMode implements OperatorService.
func (s *Server) GetConversationMode(ctx context.Context, req *operatorv1.GetConversationModeRequest) (*operatorv1.GetConversationModeResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	if req.GetConversation().GetChannel() == "" {
		return nil, errNoChannel
	}
	setting, err := s.store.ConversationMode(ctx, req.GetConversation().GetChannel(), req.GetConversation().GetThread())
	if err != nil {
		return nil, err
	}
	return &operatorv1.GetConversationModeResponse{Setting: settingToProto(setting)}, nil
}

// ListAuditLog implements OperatorService.
func (s *Server) ListAuditLog(ctx context.Context, req *operatorv1.ListAuditLogRequest) (*operatorv1.ListAuditLogResponse, error) {
	if _, err := caller(ctx, true, "read the audit log"); err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	pg := page("audit", req.GetActor(), req.GetAction(), req.GetSubject())
	before, err := pg.beforeID(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	f := store.AuditFilter{Actor: req.GetActor(), Action: req.GetAction(), Subject: req.GetSubject(), Limit: limit, BeforeID: before}
	entries, err := s.store.ListAudit(ctx, f)
	if err != nil {
		return nil, err
	}
	resp := &operatorv1.ListAuditLogResponse{Entries: make([]*operatorv1.AuditEntry, 0, len(entries))}
	for _, e := range entries {
		resp.Entries = append(resp.Entries, &operatorv1.AuditEntry{
			Id: uint64(e.ID), At: timestamppb.New(e.At), Actor: e.Actor, Action: e.Action, Subject: e.Subject,
			DetailJson: string(e.Detail),
		})
	}
	if len(entries) == limit {
		resp.NextPageToken = pg.nextID(entries[len(entries)-1].ID)
	}
	return resp, nil
}

// errNoChannel refuses a request naming a conversation without its channel.
var errNoChannel = fault.New(fault.InvalidArgument, "a conversation needs a channel")

// storeID converts an id from the API; ok is false for an id no record can have.
func storeID(id uint64) (int64, bool) {
	return int64(id), id > 0 && id <= math.MaxInt64
}

// notFound is the NOT_FOUND of a record: what it is ("job", "prompt", …) and the id asked for.
func notFound(what string, id uint64) error {
	return fault.Newf(fault.NotFound, "%s %d does not exist", what, id)
}

// readRecord reads the record apiID names with read: an id no record can have, and
// store.ErrNotFound from read, are NOT_FOUND naming what; other errors are returned as they are.
func readRecord[T any](apiID uint64, what string, read func(id int64) (T, error)) (T, error) {
	var zero T
	id, ok := storeID(apiID)
	if !ok {
		return zero, notFound(what, apiID)
	}
	rec, err := read(id)
	if err == nil {
		return rec, nil
	}
	if errors.Is(err, store.ErrNotFound) {
		return zero, notFound(what, apiID)
	}
	return zero, err
}

// conversationFilter checks a list filter's conversation: a thread needs its channel.
func conversationFilter(c *conversationv1.Conversation) (channel, thread string, err error) {
	if c.GetChannel() == "" && c.GetThread() != "" {
		return "", "", fault.New(fault.InvalidArgument, "a conversation filter with a thread needs its channel")
	}
	if err := fieldrule.Check(fieldrule.Channel, "conversation.channel", c.GetChannel()); err != nil {
		return "", "", err
	}
	if err := fieldrule.Check(fieldrule.Thread, "conversation.thread", c.GetThread()); err != nil {
		return "", "", err
	}
	return c.GetChannel(), c.GetThread(), nil
}

func conversationToProto(channel, thread string) *conversationv1.Conversation {
	return &conversationv1.Conversation{Channel: channel, Thread: thread}
}

// timestamp converts t, leaving a zero time unset.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// protoOf returns the proto value m maps to v: the zero value (…_UNSPECIFIED) for a v that
// none maps to, and for the empty v the filters map it from.
func protoOf[P comparable, V comparable](m map[P]V, v V) P {
	var zero V
	if v == zero {
		var none P
		return none
	}
	for p, mv := range m {
		if mv == v {
			return p
		}
	}
	var none P
	return none
}

var modeFromProto = map[operatorv1.Mode]store.Mode{
	operatorv1.Mode_MODE_ASK:   store.ModeAsk,
	operatorv1.Mode_MODE_AUTO:  store.ModeAuto,
	operatorv1.Mode_MODE_ADMIN: store.ModeAdmin,
}

func settingToProto(m store.ModeSetting) *operatorv1.ModeSetting {
	out := &operatorv1.ModeSetting{UpdatedBy: m.UpdatedBy}
	for pm, sm := range modeFromProto {
		if sm == m.Mode {
			out.Mode = pm
		}
	}
	if !m.UpdatedAt.IsZero() {
		out.UpdatedAt = timestamppb.New(m.UpdatedAt)
	}
	return out
}

func roleToProto(r store.OperatorRole) operatorv1.Role {
	switch r {
	case store.RoleAdmin:
		return operatorv1.Role_ROLE_ADMIN
	case store.RoleMember:
		return operatorv1.Role_ROLE_MEMBER
	}
	return operatorv1.Role_ROLE_UNSPECIFIED
}
