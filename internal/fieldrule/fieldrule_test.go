package fieldrule

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/fault"
)

// longest returns the longest value a kind allows and one just past it.
func longest(k Kind) (max, over string) {
	switch k {
	case ResponseID:
		return strings.Repeat("r", MaxResponseID), strings.Repeat("r", MaxResponseID+1)
	case CallID:
		return "6F1C1A52-2F4E-4A43-9D43-111111111111", "6f1c1a52-2f4e-4a43-9d43-1111111111111"
	case BashCallID: // characters, not bytes
		return strings.Repeat("é", MaxBashCallID), strings.Repeat("é", MaxBashCallID+1)
	case Channel, Thread, Requester, WorkerKey:
		return strings.Repeat("c", MaxIdentity), strings.Repeat("c", MaxIdentity+1)
	case AgentName:
		return strings.Repeat("a", MaxAgentName), strings.Repeat("a", MaxAgentName+1)
	case OperatorName:
		return "@" + strings.Repeat("o", MaxOperatorName-1), "@" + strings.Repeat("o", MaxOperatorName)
	case Flag:
		return strings.Repeat("f", MaxFlag), strings.Repeat("f", MaxFlag+1)
	case Surface:
		return strings.Repeat("s", MaxSurface), strings.Repeat("s", MaxSurface+1)
	case ChatUserID:
		return strings.Repeat("u", MaxChatUserID), strings.Repeat("u", MaxChatUserID+1)
	case Person:
		return "@" + strings.Repeat("p", MaxPerson-1), "@" + strings.Repeat("p", MaxPerson)
	}
	panic("no such kind")
}

func TestEveryKindTakesItsLongestValueAndRefusesOneOverAndControlCharacters(t *testing.T) {
	for k := ResponseID; k <= Person; k++ {
		max, over := longest(k)
		t.Run(max[:1]+"/"+rules[k].says, func(t *testing.T) {
			if err := Check(k, "f", max); err != nil {
				t.Errorf("the longest value: %v", err)
			}
			for name, v := range map[string]string{
				"OneOver": over, "NUL": max[:len(max)-1] + "\x00", "Newline": "a\nb", "Escape": "a\x1bb",
				"DEL": "a\x7fb", "C1": "a\u0085b", "InvalidUTF8": "a\xffb",
			} {
				err := Check(k, "f", v)
				if !fault.Is(err, fault.InvalidArgument) || !strings.HasPrefix(err.Error(), "f must be ") {
					t.Errorf("%s: %v, want INVALID_ARGUMENT naming the field", name, err)
				}
			}
		})
	}
}

func TestARequestIsCheckedByItsFieldsNamesAtAnyDepth(t *testing.T) {
	long := strings.Repeat("c", MaxIdentity+1)
	for _, tc := range []struct {
		name string
		req  proto.Message
		want string // the refusal's start; "" when the request passes
	}{
		{"AValidRequestPasses", &responsev1.OpenResponseRequest{AgentName: "code", RequesterId: "@sam",
			Conversation: &conversationv1.Conversation{Channel: "room", Thread: "t1"}, Flags: []string{"clean"}}, ""},
		{"EmptyFieldsAreLeftToTheHandler", &responsev1.OpenResponseRequest{}, ""},
		{"ANestedChannel", &operatorv1.ListJobsRequest{Conversation: &conversationv1.Conversation{Channel: long}}, "conversation.channel must be "},
		{"ARequesterID", &responsev1.OpenResponseRequest{RequesterId: "a\x00"}, "requester_id must be "},
		{"AnEmptyFlag", &responsev1.OpenResponseRequest{Flags: []string{"clean", ""}}, "flags must be "},
		{"AnAgentName", &operatorv1.GetShellModeRequest{AgentName: "../etc"}, "agent_name must be "},
		{"AnAuditActor", &operatorv1.ListAuditLogRequest{Actor: "ada\n"}, "actor must be "},
		{"ACallID", &responsev1.GetToolCallRequest{ResponseId: "r", CallId: "nope"}, "call_id must be a UUID"},
		{"AResponseID", &operatorv1.ListProgressRequest{ResponseId: "r 1"}, "response_id must be "},
		{"ABashCallID", &responsev1.GetWindowRequest{ResponseId: "r", BashCallId: "b\tc"}, "bash_call_id must be "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRequest(tc.req)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !fault.Is(err, fault.InvalidArgument) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%v, want INVALID_ARGUMENT %q", err, tc.want)
			}
		})
	}
}
