package threadapi

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	threadv1 "github.com/turncli/turncli/gen/turncli/thread/v1"
	"github.com/turncli/turncli/primary/store"
	"github.com/turncli/turncli/primary/threadfeed"
)

var kindToProto = map[threadfeed.Kind]threadv1.ItemKind{
	threadfeed.KindCommandApproval: threadv1.ItemKind_ITEM_KIND_COMMAND_APPROVAL,
	threadfeed.KindPlanApproval:    threadv1.ItemKind_ITEM_KIND_PLAN_APPROVAL,
	threadfeed.KindPermission:      threadv1.ItemKind_ITEM_KIND_PERMISSION,
	threadfeed.KindCallApproval:    threadv1.ItemKind_ITEM_KIND_CALL_APPROVAL,
	threadfeed.KindQuestionForm:    threadv1.ItemKind_ITEM_KIND_QUESTION_FORM,
	threadfeed.KindPlanSnapshot:    threadv1.ItemKind_ITEM_KIND_PLAN_SNAPSHOT,
	threadfeed.KindJob:             threadv1.ItemKind_ITEM_KIND_JOB,
	threadfeed.KindAgent:           threadv1.ItemKind_ITEM_KIND_AGENT,
}

var changeToProto = map[store.ThreadChange]threadv1.ItemChange{
	store.ThreadOpened:  threadv1.ItemChange_ITEM_CHANGE_OPENED,
	store.ThreadUpdated: threadv1.ItemChange_ITEM_CHANGE_UPDATED,
	store.ThreadClosed:  threadv1.ItemChange_ITEM_CHANGE_CLOSED,
}

var stateToProto = map[threadfeed.State]threadv1.ItemState{
	threadfeed.StateOpen:   threadv1.ItemState_ITEM_STATE_OPEN,
	threadfeed.StateClosed: threadv1.ItemState_ITEM_STATE_CLOSED,
}

var actionToProto = map[threadfeed.Action]threadv1.ItemAction{
	threadfeed.ActionApprove:           threadv1.ItemAction_ITEM_ACTION_APPROVE,
	threadfeed.ActionDeny:              threadv1.ItemAction_ITEM_ACTION_DENY,
	threadfeed.ActionComment:           threadv1.ItemAction_ITEM_ACTION_COMMENT,
	threadfeed.ActionAllowOnce:         threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE,
	threadfeed.ActionAllowThread:       threadv1.ItemAction_ITEM_ACTION_ALLOW_THREAD,
	threadfeed.ActionAllowConversation: threadv1.ItemAction_ITEM_ACTION_ALLOW_CONVERSATION,
	threadfeed.ActionSaveDraft:         threadv1.ItemAction_ITEM_ACTION_SAVE_DRAFT,
	threadfeed.ActionSubmit:            threadv1.ItemAction_ITEM_ACTION_SUBMIT,
	threadfeed.ActionCancel:            threadv1.ItemAction_ITEM_ACTION_CANCEL,
}

// actionFromProto are the decisions DecideItem takes; a form's moves have calls of their own.
var actionFromProto = map[threadv1.ItemAction]threadfeed.Action{
	threadv1.ItemAction_ITEM_ACTION_APPROVE:            threadfeed.ActionApprove,
	threadv1.ItemAction_ITEM_ACTION_DENY:               threadfeed.ActionDeny,
	threadv1.ItemAction_ITEM_ACTION_COMMENT:            threadfeed.ActionComment,
	threadv1.ItemAction_ITEM_ACTION_ALLOW_ONCE:         threadfeed.ActionAllowOnce,
	threadv1.ItemAction_ITEM_ACTION_ALLOW_THREAD:       threadfeed.ActionAllowThread,
	threadv1.ItemAction_ITEM_ACTION_ALLOW_CONVERSATION: threadfeed.ActionAllowConversation,
}

var howToProto = map[threadfeed.How]threadv1.ClosingHow{
	threadfeed.ClosedDecided:   threadv1.ClosingHow_CLOSING_HOW_DECIDED,
	threadfeed.ClosedAnswered:  threadv1.ClosingHow_CLOSING_HOW_ANSWERED,
	threadfeed.ClosedExpired:   threadv1.ClosingHow_CLOSING_HOW_EXPIRED,
	threadfeed.ClosedCancelled: threadv1.ClosingHow_CLOSING_HOW_CANCELLED,
	threadfeed.ClosedFinished:  threadv1.ClosingHow_CLOSING_HOW_FINISHED,
}

func messageToProto(m threadfeed.Message) *threadv1.SubscribeResponse {
	out := &threadv1.SubscribeResponse{Cursor: string(m.Cursor)}
	if m.Item != nil {
		out.Item = itemToProto(*m.Item)
	}
	if c := m.Chunk; c != nil {
		out.Chunk = &threadv1.ReportChunk{ItemKey: c.Key, Index: uint32(c.Index), Count: uint32(c.Count), Text: c.Text}
	}
	return out
}

func itemToProto(it threadfeed.Item) *threadv1.ThreadItem {
	out := &threadv1.ThreadItem{
		EventId: uint64(it.EventID), Change: changeToProto[it.Change],
		Conversation: &conversationv1.Conversation{Channel: it.Channel, Thread: it.Thread},
		Kind:         kindToProto[it.Kind], ItemKey: it.Key, State: stateToProto[it.State],
		Title: it.Title, Text: it.Text, Preview: it.Preview, PreviewTruncated: it.PreviewTruncated,
		Workdir: it.Workdir, ApproveLabel: it.ApproveLabel, DenyLabel: it.DenyLabel,
		Requester: it.Requester, Agent: it.Agent, Presentation: it.Presentation, Revision: uint64(max(it.Revision, 0)),
		ReportChunks: uint32(it.Report.Chunks), ReportBytes: uint64(it.Report.Bytes),
	}
	if !it.At.IsZero() {
		out.At = timestamppb.New(it.At)
	}
	for _, c := range it.Comments {
		out.Comments = append(out.Comments, &threadv1.Comment{By: c.By, Text: c.Text, At: timestamppb.New(c.At)})
	}
	for _, a := range it.Actions {
		out.Actions = append(out.Actions, actionToProto[a])
	}
	if c := it.Closing; c != nil {
		out.Closing = &threadv1.Closing{How: howToProto[c.How], Decision: actionToProto[c.Decision], By: c.By, Note: c.Note}
		if !c.At.IsZero() {
			out.Closing.At = timestamppb.New(c.At)
		}
		if c.Via != nil {
			out.Closing.Via = &threadv1.ChatIdentity{Surface: c.Via.Surface, ChatUserId: c.Via.ChatUserID}
		}
	}
	return out
}
