package client

import (
	"net/http"
	"strings"
	"testing"
)

// TestDescribeOfAToolkitNamesItsFunctions: `tools describe TOOLKIT` is still the exit-2 usage
// error naming tools search, but it first loads the toolkit with a describe and reads its
// functions from tools.list, so the message names them and the describe to run next.
func TestDescribeOfAToolkitNamesItsFunctions(t *testing.T) {
	// The catalog has "files" (loaded by the probe describe) between two other toolkits.
	page := `{"items":[{"description":"d","function":"x","toolkit":"before"},` +
		`{"description":"d","function":"read","toolkit":"files"},{"description":"d","function":"write","toolkit":"files"},` +
		`{"description":"d","function":"y","toolkit":"after"}],"next_cursor":null}`
	for _, tc := range []struct {
		name, page, probe string
		want              []string
	}{
		{"LoadedToolkit", page, `{"detail":"Unknown function \"mindroom-agent-load\" in toolkit \"files\"; its functions: read, write"}`, []string{
			`missing function name of toolkit "files", whose functions are read, write`,
			"describe one with `mindroom-agent tools describe files.read`",
			"or run `mindroom-agent tools search files` to see them",
		}},
		{"ToolkitThatDidNotLoad", `{"items":[{"deferred":true,"description":"d","toolkit":"files"}],"next_cursor":null}`,
			`{"detail":"MCP server files did not start"}`, []string{
				`toolkit "files", which did not load: Agent CLI request was rejected: MCP server files did not start`,
				"run `mindroom-agent tools search files` to see its functions once it loads",
			}},
		{"UnknownToolkit", `{"items":[],"next_cursor":null}`, `{"detail":"Unknown toolkit \"files\"; available toolkits: before"}`, []string{
			`toolkit "files": Agent CLI request was rejected: Unknown toolkit "files"; available toolkits: before`,
			"`mindroom-agent tools search files`",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case strings.Contains(body, `"operation":"tools.describe"`):
					answer(w, http.StatusUnprocessableEntity, tc.probe)
				case strings.Contains(body, `"operation":"tools.list"`):
					answer(w, http.StatusOK, tc.page)
				default:
					answer(w, http.StatusBadRequest, `{"detail":"unexpected"}`)
				}
			})
			m := runCLI(t, srv.env(), "", "tools", "describe", "files").wantError(t, ExitInvalid, "missing function name")
			for _, want := range tc.want {
				if !strings.Contains(m["error"].(string), want) {
					t.Errorf("message lacks %q: %s", want, m["error"])
				}
			}
			reqs := srv.requests()
			if len(reqs) != 2 || reqs[0].body != `{"function":"mindroom-agent-load","operation":"tools.describe","toolkit":"files"}` ||
				!strings.Contains(reqs[1].body, `"operation":"tools.list"`) {
				t.Fatalf("requests %+v, want the probe describe, then one listing", reqs)
			}
		})
	}

	t.Run("ARejectedProbeKeepsTheUsageMessage", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
			answer(w, http.StatusConflict, `{"detail":"Bash call has ended"}`)
		})
		runCLI(t, srv.env(), "", "tools", "describe", "files.").wantError(t, ExitInvalid,
			"missing function name of toolkit \"files\"; run `mindroom-agent tools search files` to see its functions; "+
				"its functions could not be read: Agent CLI request was rejected: Bash call has ended")
	})
	t.Run("ACallWithoutAFunctionSendsNothing", func(t *testing.T) {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, body string) { answer(w, 200, `{}`) })
		runCLI(t, srv.env(), "", "tools", "call", "files").wantError(t, ExitInvalid, "mindroom-agent tools search files")
		if n := len(srv.requests()); n != 0 {
			t.Fatalf("%d requests sent", n)
		}
	})
}
