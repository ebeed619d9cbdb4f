package interaction_test

import (
	"encoding/json"
	"strings"
	"testing"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestToolTextsCarryTheirUsageRules reads each function's description and instructions as an
// agent does, with `mindroom-agent tools describe` in real Bash, and checks that the rules of
// using it are there.
func TestToolTextsCarryTheirUsageRules(t *testing.T) {
	env := start(t)
	// A trusted foreground response with progress reports is offered every function.
	resp := trusted(t, env, "$texts", func(r *responsev1.OpenResponseRequest) {
		r.Flags = append(r.Flags, "progress_report")
	})
	for _, tc := range []struct {
		name, function string
		rules          []string
	}{
		{"RequestApprovalIsNotAClarificationForm", "request_approval", []string{"It is not a clarification form"}},
		{"RequestApprovalGatesDependentWorkOnAnAffirmativeDecision", "request_approval", []string{
			"Continue work that depends on it only after an affirmative decision", "use the feedback"}},
		{"AskQuestionsLeavesOnlyIndependentWork", "ask_questions", []string{"continue only with work that does not depend on them"}},
		{"AskQuestionsNeverInfersADefaultAnswer", "ask_questions", []string{"never infer or assume a default answer"}},
		{"AskQuestionsIsNotForAskingPermission", "ask_questions", []string{"It is not for asking permission"}},
		{"ReportProgressSendsTheFullSnapshot", "report_progress", []string{"send the full, authoritative snapshot every time"}},
		{"ReportProgressKeepsStepIDsAndOrderStable", "report_progress", []string{"Keep step ids and their order stable"}},
		{"ReportProgressReportsSubstantialStagesOnly", "report_progress", []string{"Report substantial stages only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := describeText(t, env, resp, tc.function)
			for _, rule := range tc.rules {
				if !strings.Contains(text, rule) {
					t.Errorf("%s does not say %q:\n%s", tc.function, rule, text)
				}
			}
		})
	}
}

// describeText returns what `mindroom-agent tools describe interaction.<function>` tells an
// agent: the description, then every instruction.
func describeText(t *testing.T, env *testenv.Env, responseID, function string) string {
	t.Helper()
	run := env.RunBash(t, responseID, "describe-"+itoa(bashSeq.Add(1)), "mindroom-agent tools describe interaction."+function)
	if code := run.Result.GetExitCode(); code != 0 {
		t.Fatalf("describe %s: exit %d, %s %s", function, code, run.Stdout, run.Stderr)
	}
	stdout := run.Stdout
	var d struct {
		Description  string   `json:"description"`
		Instructions []string `json:"instructions"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("describe %s printed %q: %v", function, stdout, err)
	}
	return d.Description + "\n" + strings.Join(d.Instructions, "\n")
}
