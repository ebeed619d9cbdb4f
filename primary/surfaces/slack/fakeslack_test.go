package slack

import (
	"encoding/json"
	"fmt"
	"testing"

	goslack "github.com/slack-go/slack"

	"github.com/turncli/turncli/internal/slackfake"
)

// call is one recorded Web API call.
type call = slackfake.Call

// newFakeSlack is a recording Web API and a client of it.
func newFakeSlack(t *testing.T) (*slackfake.Fake, *goslack.Client) {
	t.Helper()
	f := slackfake.New(t)
	return f, goslack.New("xoxb-test", goslack.OptionAPIURL(f.APIURL()))
}

// blocksOf decodes the blocks of a recorded message call into plain JSON values.
func blocksOf(t *testing.T, c call) []map[string]any {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(c.Values["blocks"]), &blocks); err != nil {
		t.Fatalf("%s blocks %q: %v", c.Method, c.Values["blocks"], err)
	}
	return blocks
}

// blockTexts lists each block as "<type>: <text>", buttons as "button <action_id>=<value>".
func blockTexts(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		switch b["type"] {
		case "section":
			out = append(out, "section: "+b["text"].(map[string]any)["text"].(string))
		case "context":
			for _, e := range b["elements"].([]any) {
				out = append(out, "context: "+e.(map[string]any)["text"].(string))
			}
		case "actions":
			for _, e := range b["elements"].([]any) {
				el := e.(map[string]any)
				out = append(out, fmt.Sprintf("button %s=%s", el["action_id"], el["value"]))
			}
		default:
			out = append(out, fmt.Sprint(b["type"]))
		}
	}
	return out
}

// blocksJSON encodes rendered blocks as Slack receives them.
func (r rendered) blocksJSON(t *testing.T) []map[string]any {
	t.Helper()
	b, err := json.Marshal(r.blocks)
	if err != nil {
		t.Fatal(err)
	}
	return blocksOf(t, call{Method: "render", Values: map[string]string{"blocks": string(b)}})
}
