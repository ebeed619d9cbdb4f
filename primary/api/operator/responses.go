package operator

import (
	"context"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/google/uuid"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/internal/pagetoken"
	"github.com/turncli/turncli/primary/response"
)

// What ListResponses shows of each response: its latest receipts, each outcome within a
// budget, so that a list of many busy responses stays small.
const (
	responseReceipts  = 20
	maxOutcomeShown   = 2 << 10
	outcomeMarkerRoom = 128 // bytes kept free for the shortening marker
)

// ListResponses implements OperatorService: one page of the live responses in id order. A
// response that began closing while it was read is left out.
func (s *Server) ListResponses(ctx context.Context, req *operatorv1.ListResponsesRequest) (*operatorv1.ListResponsesResponse, error) {
	if _, err := caller(ctx, false, ""); err != nil {
		return nil, err
	}
	limit, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	pg := page("responses")
	after, err := pg.responseID(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	live := s.responses.List() // in id order
	start, _ := slices.BinarySearchFunc(live, after, func(r *response.Response, id string) int {
		if r.ID() <= id {
			return -1
		}
		return 1
	})
	live = live[start:]
	resp := &operatorv1.ListResponsesResponse{Responses: make([]*operatorv1.LiveResponse, 0, min(limit, len(live)))}
	for i, r := range live {
		if len(resp.Responses) == limit {
			resp.NextPageToken = pg.next(live[i-1].ID())
			break
		}
		in := r.Inspect(responseReceipts)
		if in.Closing {
			continue
		}
		resp.Responses = append(resp.Responses, liveResponseToProto(in))
	}
	return resp, nil
}

// responseID returns the response id (a UUID) a ListResponses token holds: the last response
// of the previous page; "" for the first page.
func (p listPage) responseID(token string) (string, error) {
	pos, err := p.position(token, 1)
	if err != nil || pos == nil {
		return "", err
	}
	if uuid.Validate(pos[0]) != nil {
		return "", pagetoken.ErrMalformed
	}
	return pos[0], nil
}

func liveResponseToProto(in response.Inspection) *operatorv1.LiveResponse {
	out := &operatorv1.LiveResponse{
		Id:             in.ID,
		Agent:          in.Agent,
		Requester:      in.Requester,
		Conversation:   conversationToProto(in.Channel, in.Thread),
		Origin:         protoOf(originFromProto, in.Origin),
		Flags:          in.Flags,
		ShellMode:      protoOf(shellModeFromProto, in.ShellMode),
		Location:       &operatorv1.Location{WorkerKey: in.WorkerKey, WorkerId: in.BoundWorker},
		GrantExpiresAt: timestamp(in.GrantExpires),
		Fenced:         in.Fenced,
		Unsettled:      count(in.Unsettled),
		Windows:        make([]*operatorv1.BashWindow, 0, len(in.Windows)),
		ReceiptCount:   count(in.ReceiptCount),
		Receipts:       make([]*operatorv1.CallReceipt, 0, len(in.Receipts)),
	}
	for _, w := range in.Windows {
		out.Windows = append(out.Windows, &operatorv1.BashWindow{
			BashCallId: w.BashCallID, State: protoOf(windowStateFromProto, w.State),
			Admitted: count(w.Admitted), Unsettled: count(w.Unsettled),
		})
	}
	for _, rc := range in.Receipts {
		outcome, shortened := shortenOutcome(rc.Outcome)
		if echoesInput(rc.Toolkit, rc.Function) {
			outcome, shortened = hiddenOutcome, false
		}
		out.Receipts = append(out.Receipts, &operatorv1.CallReceipt{
			CallId: rc.CallID, Toolkit: rc.Toolkit, Function: rc.Function, Status: protoOf(callStatusFromProto, rc.Status),
			ParentBashCallId: rc.Parent, OutcomeJson: outcome, OutcomeShortened: shortened,
		})
	}
	return out
}

// hiddenOutcome stands for the outcome of a call that returns its input unmasked.
const hiddenOutcome = `"(hidden: it returns the tool input it was asked about; see the prompt for its masked copy)"`

// echoesInput reports whether a function's outcome repeats its input as given: an allowed
// permission_prompt returns the original tool input, secrets included, which people may
// only see masked.
func echoesInput(toolkit, function string) bool {
	return toolkit == "interaction" && function == "permission_prompt"
}

// shortenOutcome returns an outcome's JSON text within maxOutcomeShown bytes. A larger one
// becomes a JSON string: the start of its text, cut between characters, and a marker saying it
// was shortened and by how much.
func shortenOutcome(outcome []byte) (string, bool) {
	if len(outcome) <= maxOutcomeShown {
		return string(outcome), false
	}
	keep := maxOutcomeShown - outcomeMarkerRoom
	for {
		prefix := outcome[:keep]
		for !utf8.Valid(prefix) { // never cut a character in half
			prefix = prefix[:len(prefix)-1]
		}
		enc, err := canonjson.Marshal(fmt.Sprintf("%s … [outcome shortened: %d bytes, first %d shown]", prefix, len(outcome), len(prefix)))
		switch {
		case err != nil: // not reached: the text is valid UTF-8
			return `"[outcome shortened]"`, true
		case len(enc) <= maxOutcomeShown:
			return string(enc), true
		}
		// A byte of text takes at most 6 bytes of JSON (\u00xx): dropping a sixth of the
		// overflow converges without going below what fits.
		keep -= max(1, (len(enc)-maxOutcomeShown+5)/6)
	}
}

// count converts a count of the response package, always small, for the API.
func count(n int) uint32 { return uint32(max(n, 0)) }

var originFromProto = map[operatorv1.ResponseOrigin]string{
	operatorv1.ResponseOrigin_RESPONSE_ORIGIN_FOREGROUND: response.OriginForeground,
	operatorv1.ResponseOrigin_RESPONSE_ORIGIN_BACKGROUND: response.OriginBackground,
	operatorv1.ResponseOrigin_RESPONSE_ORIGIN_SCHEDULED:  response.OriginScheduled,
	operatorv1.ResponseOrigin_RESPONSE_ORIGIN_RECOVERY:   response.OriginRecovery,
	operatorv1.ResponseOrigin_RESPONSE_ORIGIN_API:        response.OriginAPI,
}

var shellModeFromProto = map[operatorv1.ShellMode]string{
	operatorv1.ShellMode_SHELL_MODE_STANDARD: "standard",
	operatorv1.ShellMode_SHELL_MODE_MINIMAL:  "minimal",
}

var windowStateFromProto = map[operatorv1.WindowState]string{
	operatorv1.WindowState_WINDOW_STATE_OPEN:     "open",
	operatorv1.WindowState_WINDOW_STATE_DRAINING: "draining",
	operatorv1.WindowState_WINDOW_STATE_CLOSED:   "closed",
}

var callStatusFromProto = map[operatorv1.CallStatus]response.Status{
	operatorv1.CallStatus_CALL_STATUS_QUEUED:    response.Queued,
	operatorv1.CallStatus_CALL_STATUS_RUNNING:   response.Running,
	operatorv1.CallStatus_CALL_STATUS_WAITING:   response.Waiting,
	operatorv1.CallStatus_CALL_STATUS_COMPLETED: response.Completed,
	operatorv1.CallStatus_CALL_STATUS_FAILED:    response.Failed,
	operatorv1.CallStatus_CALL_STATUS_CANCELLED: response.Cancelled,
}
