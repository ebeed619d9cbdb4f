package interaction

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/secrets"
)

// approvalText is one of request_approval's texts as its descriptor states it: at most most
// characters, trimmed, def when absent or blank.
type approvalText struct {
	key, def string
	most     int
}

var approvalTexts = []approvalText{
	{"details", "", 8000}, {"title", DefaultApprovalTitle, 200},
	{"approve_label", DefaultApproveLabel, 60}, {"deny_label", DefaultDenyLabel, 60},
}

// FuzzRequestApprovalArgs checks request_approval's arguments against its descriptor: details
// required, and every text a string of at most its limit, trimmed, defaulted when blank.
func FuzzRequestApprovalArgs(f *testing.F) {
	for _, at := range approvalTexts {
		rest := `,"details":"Deploy v2 to production"`
		if at.key == "details" {
			rest = `,"title":"Deploy"`
		}
		for _, s := range withSizes(at.key, at.most, rest) {
			f.Add([]byte(s))
		}
	}
	for _, s := range []string{`{}`, `{"details":null}`, `{"details":3}`, `{"details":"x","title":" "}`,
		`{"details":"x","approve_label":"","deny_label":"\t"}`, `{"details":"x","title":["t"]}`,
		`{"details":"Delete \u0000 rows","title":"Löschen 🗑"}`, `{"details":"x","other":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		p, err := approvalPrompt(catalog.Call{Arguments: args})
		want := true
		for _, at := range approvalTexts {
			raw, isString, present := stringField(args, at.key)
			trimmed := strings.TrimSpace(raw)
			switch {
			case present && !isString, utf8.RuneCountInString(trimmed) > at.most:
				want = false
			case at.key == "details" && trimmed == "":
				want = false
			}
		}
		if err != nil {
			if want {
				t.Fatalf("arguments %.200q refused: %v", data, err)
			}
			checkRefusal(t, data, err)
			return
		}
		if !want {
			t.Fatalf("arguments %.200q accepted as %+v", data, p)
		}
		got := map[string]string{"details": p.Details, "title": p.Title, "approve_label": p.ApproveLabel, "deny_label": p.DenyLabel}
		again := map[string]any{}
		for _, at := range approvalTexts {
			raw, _, _ := stringField(args, at.key)
			wantText := strings.TrimSpace(raw)
			if wantText == "" {
				wantText = at.def
			}
			if got[at.key] != wantText {
				t.Fatalf("arguments %.200q: %s is %q, want %q", data, at.key, got[at.key], wantText)
			}
			again[at.key] = got[at.key]
		}
		q, err := approvalPrompt(catalog.Call{Arguments: again})
		if err != nil || !reflect.DeepEqual(q, p) {
			t.Fatalf("accepted %+v is not accepted again as itself: %+v, %v", p, q, err)
		}
	})
}

// fuzzKnownSecret is a configured secret value the permission prompt's masked copy must never
// show.
const fuzzKnownSecret = "fuzz-known-secret-0123"

// FuzzPermissionPromptArgs checks permission_prompt's arguments: unknown keys are dropped,
// tool_name defaults to "a tool", input falls back to tool_input then {} (null counts as
// absent), only names and ids over their limit are refused, the operators' copy is masked and
// the allow result carries the original input.
func FuzzPermissionPromptArgs(f *testing.F) {
	for _, s := range withSizes("tool_name", 200, `,"input":{"path":"/tmp/x"}`) {
		f.Add([]byte(s))
	}
	for _, s := range withSizes("tool_use_id", 200, `,"tool_name":"Bash"`) {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{}`, `{"tool_name":null,"input":null,"tool_input":null}`, `{"tool_name":5,"tool_use_id":[]}`,
		`{"tool_name":"Bash","input":{"command":"ls","api_key":"k","nested":[{"Authorization":"Bearer x"}]}}`,
		`{"tool_name":"Write","input":null,"tool_input":{"content":"` + fuzzKnownSecret + `"}}`,
		`{"input":"` + fuzzKnownSecret + fuzzKnownSecret + `","tool_input":1}`, `{"input":[1,2.50,true,null,"x"]}`,
		`{"input":{"a":{"b":{"c":{"password":{"deep":1}}}}}}`, `{"tool_name":"  Bash\t","extra":{"k":"v"}}`} {
		f.Add([]byte(s))
	}
	known := secrets.New()
	known.Add(fuzzKnownSecret)
	f.Fuzz(func(t *testing.T, data []byte) {
		args, ok := fuzzArgs(data)
		if !ok {
			return
		}
		before, _ := canonjson.Marshal(args)
		req, why := permissionArgs(args)
		name, nameIsString, _ := stringField(args, "tool_name")
		wantTool, named := strings.TrimSpace(name), true
		if !nameIsString || wantTool == "" {
			wantTool, named = DefaultToolName, false
		}
		useID, useIDIsString, _ := stringField(args, "tool_use_id")
		wantUseID := ""
		if useIDIsString {
			wantUseID = strings.TrimSpace(useID)
		}
		// A field of another type than string (null counts as absent) is unexpected: denied.
		wrongType := (args["tool_name"] != nil && !nameIsString) || (args["tool_use_id"] != nil && !useIDIsString)
		var wantInput any = map[string]any{}
		if v := args["input"]; v != nil {
			wantInput = v
		} else if v := args["tool_input"]; v != nil {
			wantInput = v
		}
		refuse := wrongType || utf8.RuneCountInString(wantTool) > 200 || utf8.RuneCountInString(wantUseID) > 200
		if why != "" {
			if !refuse {
				t.Fatalf("arguments %.200q refused: %s", data, why)
			}
			if len(why) > maxRefusalBytes {
				t.Fatalf("arguments %.200q: denial of %d bytes", data, len(why))
			}
			return
		}
		switch {
		case refuse:
			t.Fatalf("arguments %.200q accepted with tool %.80q and use id %.80q", data, req.tool, req.toolUseID)
		case req.tool != wantTool || req.named != named || req.toolUseID != wantUseID:
			t.Fatalf("arguments %.200q read as tool %q (named %v), use id %q; want %q (%v), %q",
				data, req.tool, req.named, req.toolUseID, wantTool, named, wantUseID)
		case !canonjson.Equal(req.input, wantInput):
			t.Fatalf("arguments %.200q: input %#v, want %#v", data, req.input, wantInput)
		}

		masked := maskSecrets(req.input, known)
		if _, err := canonjson.Marshal(masked); err != nil {
			t.Fatalf("arguments %.200q: masked copy cannot be written: %v", data, err)
		}
		if after, _ := canonjson.Marshal(args); string(after) != string(before) {
			t.Fatalf("masking changed the arguments: %s became %s", before, after)
		}
		checkMasked(t, data, masked)

		res, err := allow(req.input)
		if err != nil {
			t.Fatalf("arguments %.200q: allow result: %v", data, err)
		}
		decision, err := canonjson.ParseObject([]byte(res.Value.(string)))
		if err != nil || decision["behavior"] != "allow" || !canonjson.Equal(decision["updatedInput"], req.input) {
			t.Fatalf("arguments %.200q: allow result %s does not carry the original input", data, res.Value)
		}

		again := map[string]any{"input": req.input, "tool_use_id": req.toolUseID}
		if req.named {
			again["tool_name"] = req.tool
		}
		req2, why := permissionArgs(again)
		if why != "" || req2.tool != req.tool || req2.named != req.named || req2.toolUseID != req.toolUseID ||
			!canonjson.Equal(req2.input, req.input) {
			t.Fatalf("accepted %+v is not accepted again as itself: %+v, %q", req, req2, why)
		}
	})
}

// checkMasked checks the operators' copy: every value under a secret-bearing key is Redacted
// and no string shows the known secret.
func checkMasked(t *testing.T, data []byte, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretKey(k) && e != Redacted {
				t.Fatalf("arguments %.200q: value under %q is shown: %#v", data, k, e)
			}
			checkMasked(t, data, e)
		}
	case []any:
		for _, e := range x {
			checkMasked(t, data, e)
		}
	case string:
		if strings.Contains(x, fuzzKnownSecret) {
			t.Fatalf("arguments %.200q: masked copy shows the known secret in %q", data, x)
		}
	}
}
