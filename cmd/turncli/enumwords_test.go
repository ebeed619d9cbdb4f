package main

import (
	"regexp"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

func TestEveryEnumValueHasALowerCaseWord(t *testing.T) {
	enums := operatorv1.File_turncli_operator_v1_operator_proto.Enums()
	if enums.Len() == 0 {
		t.Fatal("the operator API has no enums")
	}
	upper := regexp.MustCompile(`[A-Z]`)
	for i := range enums.Len() {
		d := enums.Get(i)
		for j := range d.Values().Len() {
			v := d.Values().Get(j)
			got := wordOf(d, v.Number())
			if v.Number() == 0 {
				if got != "" {
					t.Errorf("%s = %q, want none", v.Name(), got)
				}
				continue
			}
			if got == "" || upper.MatchString(got) {
				t.Errorf("%s = %q", v.Name(), got)
			}
		}
	}
	if got := wordOf(operatorv1.JobKind(0).Descriptor(), 99); got != "99" {
		t.Errorf("a value newer than the CLI = %q", got)
	}
}

func TestTheWordOfAValueIsTheOneTypedForIt(t *testing.T) {
	check := func(name string, words map[string]protoreflect.Enum) {
		for typed, v := range words {
			if got := word(v); got != typed {
				t.Errorf("%s: %v is shown as %q, typed as %q", name, v, got, typed)
			}
		}
	}
	check("approvals ls --status", asEnums(approvalStatuses))
	check("call-approvals ls --status", asEnums(callApprovalStatuses))
	check("prompts ls --status", asEnums(promptStatuses))
	check("prompts ls --kind", asEnums(promptKinds))
	check("questions ls --status", asEnums(questionStatuses))
	check("jobs ls --status", asEnums(jobStatuses))
	check("allowances revoke --scope", asEnums(permissionScopes))
	check("modes set", asEnums(conversationModes))
	check("shell set", asEnums(shellModes))
	for d, want := range map[operatorv1.Decision]string{
		operatorv1.Decision_DECISION_APPROVE: "approve", operatorv1.Decision_DECISION_DENY: "deny",
		operatorv1.Decision_DECISION_COMMENT: "comment", operatorv1.Decision_DECISION_ALLOW_ONCE: "allow --scope once",
		operatorv1.Decision_DECISION_ALLOW_THREAD: "allow --scope thread", operatorv1.Decision_DECISION_ALLOW_CONVERSATION: "allow --scope conversation",
	} {
		if got := word(d); got != want {
			t.Errorf("%v = %q, want %q", d, got, want)
		}
	}
	if got := word(operatorv1.Role_ROLE_ADMIN); got != "admin" {
		t.Errorf("ROLE_ADMIN = %q", got)
	}
}

func asEnums[E interface {
	enumValue
	protoreflect.Enum
}](words map[string]E) map[string]protoreflect.Enum {
	out := map[string]protoreflect.Enum{}
	for w, v := range words {
		out[w] = v
	}
	return out
}

func TestThePrimarysMessagesAreReworded(t *testing.T) {
	for in, want := range map[string]string{
		"an approval request takes DECISION_APPROVE, DECISION_DENY or DECISION_COMMENT, not DECISION_ALLOW_THREAD": "an approval request takes approve, deny or comment, not allow --scope thread",
		"job 3 is JOB_STATUS_FINISHED":        "job 3 is finished",
		"SHELL_MODE_MINIMAL needs a sandbox":  "minimal needs a sandbox",
		"DECISION_UNSPECIFIED stays":          "DECISION_UNSPECIFIED stays",
		"HTTP_PROXY and DECISION_MAYBE stay":  "HTTP_PROXY and DECISION_MAYBE stay",
		"XDECISION_DENY is not a whole word":  "XDECISION_DENY is not a whole word",
		"no enum here, only lower_case words": "no enum here, only lower_case words",
	} {
		if got := reword(in); got != want {
			t.Errorf("reword(%q) = %q, want %q", in, got, want)
		}
	}
}
