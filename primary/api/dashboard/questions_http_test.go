package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

// pendingQuestions saves a pending form for requester, as ask_questions does.
func pendingQuestions(t *testing.T, env *testenv.Env, requester, title string) int64 {
	t.Helper()
	qs := json.RawMessage(`[{"id":"env","prompt":"Which environment?","type":"text","options":[],"required":true,"allowCustom":true}]`)
	q, _, err := env.Primary.Internals().Store.SaveQuestionRequest(context.Background(), store.NewQuestionRequest{Channel: "!room", Thread: "$t-" + requester,
		Requester: requester, Agent: "tester", ResponseID: "r1", Title: title, Presentation: "auto", Questions: qs})
	if err != nil {
		t.Fatal(err)
	}
	return q.ID
}

func TestAnAdminSeesEveryonesPendingQuestionForms(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	memberToken, err := operators.Add(ctx, env.Primary.Internals().Store, "mia", store.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	forMia := pendingQuestions(t, env, "mia", "Deploy <where>?")
	forBob := pendingQuestions(t, env, "bob", "Which branch?")
	admin := signIn(t, env, adminToken(t, env))
	mia := signIn(t, env, memberToken)
	card := func(page string, id int64) string {
		return regexp.MustCompile(`(?s)<article class="card" id="question-` + strconv.FormatInt(id, 10) + `">.*?</article>`).FindString(page)
	}

	t.Run("TheAdminsInboxListsThemWithWhoTheyAreFor", func(t *testing.T) {
		_, inbox := admin.get("/ui/inbox")
		for id, want := range map[int64][]string{
			forMia: {`Deploy &lt;where&gt;? <span class="tag">questions for mia #` + strconv.FormatInt(forMia, 10) + `</span>`, "waits for mia's answers; only they can answer", `class="button">View</a>`},
			forBob: {`Which branch? <span class="tag">questions for bob #` + strconv.FormatInt(forBob, 10) + `</span>`, "waits for bob's answers; only they can answer"},
		} {
			c := card(inbox, id)
			for _, w := range want {
				if !strings.Contains(c, w) {
					t.Errorf("form %d's card lacks %q:\n%s", id, w, c)
				}
			}
			if strings.Contains(c, ">Answer</a>") {
				t.Errorf("the admin is offered to answer someone else's form:\n%s", c)
			}
		}
	})
	t.Run("TheAdminsQuestionsPageListsThemWithTheirRequester", func(t *testing.T) {
		_, page := admin.get("/ui/questions")
		for id, who := range map[int64]string{forMia: "mia", forBob: "bob"} {
			li := regexp.MustCompile(`(?s)<li id="question-` + strconv.FormatInt(id, 10) + `">.*?</li>`).FindString(page)
			if !strings.Contains(li, `for <span class="requester">`+who+`</span>`) {
				t.Errorf("form %d is not listed for %s:\n%s", id, who, page)
			}
		}
	})
	t.Run("AMemberStillSeesOnlyTheirOwn", func(t *testing.T) {
		_, inbox := mia.get("/ui/inbox")
		if c := card(inbox, forMia); !strings.Contains(c, "questions for you") || !strings.Contains(c, ">Answer</a>") {
			t.Errorf("mia's own form:\n%s", c)
		}
		if strings.Contains(inbox, "question-"+strconv.FormatInt(forBob, 10)) {
			t.Errorf("mia's inbox shows bob's form")
		}
		if _, page := mia.get("/ui/questions"); strings.Contains(page, "question-"+strconv.FormatInt(forBob, 10)) {
			t.Errorf("mia's questions page shows bob's form")
		}
	})
	t.Run("TheAdminCannotAnswerForTheRequester", func(t *testing.T) {
		_, page := admin.get("/ui/questions/" + strconv.FormatInt(forBob, 10))
		if !strings.Contains(page, "Only bob can answer these questions.") || strings.Contains(page, `id="submit-answers"`) {
			t.Errorf("the admin's view of bob's form:\n%s", page)
		}
		resp, body := admin.post("/ui/questions/"+strconv.FormatInt(forBob, 10)+"/answers",
			url.Values{"csrf": {admin.csrf}, "revision": {"1"}, "action": {"submit"}, "c-env": {"prod"}}, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("the admin's submit: %d, want 403: %s", resp.StatusCode, body)
		}
	})
}
