package dashboard

import (
	"net/url"

	"google.golang.org/protobuf/types/known/timestamppb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/faultgrpc"
)

// The Conversations view: a conversation's mode and an agent's shell mode in it (admins change
// them; a refused minimal mode shows every problem the preflight found), the permission
// allowances people granted, and the audit log with its filters.

// conversationQuery is what the page is about, from its query string.
type conversationQuery struct {
	Channel, Thread, Agent string
	Actor, Action, Subject string
}

func (c conversationQuery) conversation() *conversationv1.Conversation {
	if c.Channel == "" {
		return nil
	}
	return &conversationv1.Conversation{Channel: c.Channel, Thread: c.Thread}
}

// Query is the page's query string, to come back to it after a change.
func (c conversationQuery) Query() string {
	v := url.Values{}
	for k, s := range map[string]string{"channel": c.Channel, "thread": c.Thread, "agent": c.Agent, "actor": c.Actor, "action": c.Action, "subject": c.Subject} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

// conversationRow is one conversation of the list: one the store holds records of, or one a
// live response answers in.
type conversationRow struct {
	Channel, Thread string
	Mode            string // "ask" for a mode never set
	LastActivity    *timestamppb.Timestamp
	Live            bool // a live response answers in it
}

// Link opens the conversation on this page (a whole URL: a template escapes what follows
// a "?" of its own as one query value).
func (c conversationRow) Link() string {
	return "/ui/conversations?" + conversationQuery{Channel: c.Channel, Thread: c.Thread}.Query()
}

type conversationsData struct {
	Query         conversationQuery
	Conversations []conversationRow
	Mode          *operatorv1.ModeSetting
	Shell         *operatorv1.ShellModeSetting
	Allowances    []*operatorv1.PermissionAllowance
	Audit         []*operatorv1.AuditEntry
}

func queryOf(v url.Values) conversationQuery {
	return conversationQuery{Channel: v.Get("channel"), Thread: v.Get("thread"), Agent: v.Get("agent"),
		Actor: v.Get("actor"), Action: v.Get("action"), Subject: v.Get("subject")}
}

// listConversations is every conversation the store holds records of, most recently active
// first, then those only a live response answers in.
func (s *Server) listConversations(q *request) ([]conversationRow, error) {
	stored, err := s.op.ListConversations(q.ctx, &operatorv1.ListConversationsRequest{PageSize: 100})
	if err != nil {
		return nil, err
	}
	live, err := s.op.ListResponses(q.ctx, &operatorv1.ListResponsesRequest{PageSize: 100})
	if err != nil {
		return nil, err
	}
	type key struct{ channel, thread string }
	at := map[key]int{}
	rows := make([]conversationRow, 0, len(stored.GetConversations()))
	for _, c := range stored.GetConversations() {
		k := key{c.GetConversation().GetChannel(), c.GetConversation().GetThread()}
		at[k] = len(rows)
		rows = append(rows, conversationRow{Channel: k.channel, Thread: k.thread, Mode: shortEnum(c.GetMode().GetMode()), LastActivity: c.GetLastActivityAt()})
	}
	for _, r := range live.GetResponses() {
		k := key{r.GetConversation().GetChannel(), r.GetConversation().GetThread()}
		if k.channel == "" {
			continue
		}
		if i, ok := at[k]; ok {
			rows[i].Live = true
			continue
		}
		at[k] = len(rows)
		// A mode set would have made it a stored conversation: this one's is the default.
		rows = append(rows, conversationRow{Channel: k.channel, Thread: k.thread, Mode: shortEnum(operatorv1.Mode_MODE_ASK), Live: true})
	}
	return rows, nil
}

func (s *Server) loadConversations(q *request) (conversationsData, error) {
	d := conversationsData{Query: queryOf(q.r.URL.Query())}
	var err error
	if d.Conversations, err = s.listConversations(q); err != nil {
		return d, err
	}
	conv := d.Query.conversation()
	if conv != nil {
		m, err := s.op.GetConversationMode(q.ctx, &operatorv1.GetConversationModeRequest{Conversation: conv})
		if err != nil {
			return d, err
		}
		d.Mode = m.GetSetting()
		if d.Query.Agent != "" {
			sh, err := s.op.GetShellMode(q.ctx, &operatorv1.GetShellModeRequest{Conversation: conv, AgentName: d.Query.Agent})
			if err != nil {
				return d, err
			}
			d.Shell = sh.GetSetting()
		}
	}
	allowances, err := s.op.ListPermissionAllowances(q.ctx, &operatorv1.ListPermissionAllowancesRequest{Conversation: conv, PageSize: 100})
	if err != nil {
		return d, err
	}
	d.Allowances = allowances.GetAllowances()
	if !q.s.admin() { // the server reads the audit log to admins only
		return d, nil
	}
	audit, err := s.op.ListAuditLog(q.ctx, &operatorv1.ListAuditLogRequest{Actor: d.Query.Actor, Action: d.Query.Action, Subject: d.Query.Subject, PageSize: 100})
	if err != nil {
		return d, err
	}
	d.Audit = audit.GetEntries()
	return d, nil
}

// back is the Conversations page for the form's conversation, agent and filters.
func back(q *request) string {
	return "/ui/conversations?" + queryOf(q.r.PostForm).Query()
}

var conversationModes = map[string]operatorv1.Mode{"ask": operatorv1.Mode_MODE_ASK, "auto": operatorv1.Mode_MODE_AUTO, "admin": operatorv1.Mode_MODE_ADMIN}

func (s *Server) setConversationMode(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return err
	}
	f := q.r.PostForm
	mode, ok := conversationModes[f.Get("mode")]
	if !ok {
		return fault.New(fault.InvalidArgument, "the mode must be ask, auto or admin")
	}
	if _, err := s.op.SetConversationMode(q.ctx, &operatorv1.SetConversationModeRequest{Conversation: queryOf(f).conversation(), Mode: mode}); err != nil {
		return err
	}
	return s.redirect(q, back(q), "The conversation's mode is now "+f.Get("mode")+".")
}

var shellModes = map[string]operatorv1.ShellMode{"standard": operatorv1.ShellMode_SHELL_MODE_STANDARD, "minimal": operatorv1.ShellMode_SHELL_MODE_MINIMAL}

// setShellMode sets or (reset set) forgets an agent's shell mode. A refusal the server
// explains (the minimal mode's preflight problems) comes back on the page, not as an error
// page: the operator fixes the problems and tries again.
func (s *Server) setShellMode(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return err
	}
	f := q.r.PostForm
	conv, agent := queryOf(f).conversation(), f.Get("agent")
	var err error
	msg := "The shell mode of " + agent + " was reset."
	if f.Get("reset") != "" {
		_, err = s.op.ResetShellMode(q.ctx, &operatorv1.ResetShellModeRequest{Conversation: conv, AgentName: agent})
	} else {
		mode, ok := shellModes[f.Get("mode")]
		if !ok {
			return fault.New(fault.InvalidArgument, "the shell mode must be standard or minimal")
		}
		_, err = s.op.SetShellMode(q.ctx, &operatorv1.SetShellModeRequest{Conversation: conv, AgentName: agent, Mode: mode, WorkerKey: f.Get("worker_key")})
		msg = "The shell mode of " + agent + " is now " + f.Get("mode") + "."
	}
	if err = faultgrpc.FromStatus(err); fault.Is(err, fault.FailedPrecondition) {
		return s.redirect(q, back(q), "Refused: "+err.Error())
	}
	if err != nil {
		return err
	}
	return s.redirect(q, back(q), msg)
}

var permissionScopes = map[string]operatorv1.PermissionScope{
	"thread": operatorv1.PermissionScope_PERMISSION_SCOPE_THREAD, "conversation": operatorv1.PermissionScope_PERMISSION_SCOPE_CONVERSATION,
}

func (s *Server) revokeAllowance(q *request) error {
	if err := q.r.ParseForm(); err != nil {
		return err
	}
	f := q.r.PostForm
	scope, ok := permissionScopes[f.Get("scope")]
	if !ok {
		return fault.New(fault.InvalidArgument, "the scope must be thread or conversation")
	}
	conv := &conversationv1.Conversation{Channel: f.Get("allowance_channel"), Thread: f.Get("allowance_thread")}
	if _, err := s.op.RevokePermissionAllowance(q.ctx, &operatorv1.RevokePermissionAllowanceRequest{Conversation: conv, ToolName: f.Get("tool"), Scope: scope}); err != nil {
		return err
	}
	return s.redirect(q, back(q), "The allowance of "+f.Get("tool")+" was revoked.")
}
