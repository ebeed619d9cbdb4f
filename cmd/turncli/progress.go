package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/termtext"
)

// `progress ls` shows each response's latest report_progress plan as a person reads it: the
// title, then every step with its status, and under it what the step reported.

var progressCommands = []command{
	shownListCommand("progress", "list the latest report_progress plan of each response, with its steps", showProgress,
		func(fs *flag.FlagSet) fetchPage[*operatorv1.ProgressSnapshot] {
			responseID := fs.String("response", "", "only this response's progress")
			var conv conversationFlags
			conv.register(fs)
			return func(ctx context.Context, c *cli, size uint32, token string) ([]*operatorv1.ProgressSnapshot, string, error) {
				filter, err := conv.filter()
				if err != nil {
					return nil, "", err
				}
				resp, err := c.api.ListProgress(ctx, &operatorv1.ListProgressRequest{ResponseId: *responseID, Conversation: filter, PageSize: size, PageToken: token})
				return resp.GetSnapshots(), resp.GetNextPageToken(), err
			}
		}),
}

// progressStep is one step of a snapshot's steps_json (see operatorv1.ProgressSnapshot).
type progressStep struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Status  string `json:"status"`
	Details string `json:"details"`
	Output  string `json:"output"`
	Sources []struct {
		URL  string `json:"url"`
		Text string `json:"text"`
	} `json:"sources"`
}

// stepIndent is where a snapshot's steps start.
const stepIndent = "    "

func showProgress(c *cli, snapshots []*operatorv1.ProgressSnapshot) error {
	var b strings.Builder
	for i, s := range snapshots {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(termtext.Inert(s.GetTitle()) + "\n")
		var about [][]string
		for _, f := range [][2]string{{"response", s.GetResponseId()}, {"agent", s.GetAgent()},
			{"conversation", conversationText(s.GetConversation())}, {"requester", s.GetRequester()}, {"updated", at(s.GetUpdatedAt())}} {
			if f[1] != "" {
				about = append(about, []string{"  " + f[0] + ":", termtext.Inert(f[1])})
			}
		}
		writeColumns(&b, about)
		var steps []progressStep
		if err := json.Unmarshal([]byte(s.GetStepsJson()), &steps); err != nil {
			b.WriteString("  steps: " + termtext.Inert(s.GetStepsJson()) + "\n") // as it came, rather than nothing
			continue
		}
		b.WriteString("  steps:\n")
		writeSteps(&b, steps)
	}
	_, err := io.WriteString(c.stdout, b.String())
	return err
}

// writeSteps prints steps as STATUS ID TITLE columns, each followed by its details, output and
// sources, indented to its title.
func writeSteps(b *strings.Builder, steps []progressStep) {
	if len(steps) == 0 {
		return
	}
	rows := make([][]string, len(steps))
	var widths []int
	for i, st := range steps {
		rows[i] = []string{stepIndent + termtext.Inert(st.Status), termtext.Inert(st.ID), termtext.Inert(st.Title)}
		widths = widen(widths, rows[i])
	}
	indent := strings.Repeat(" ", widths[0]+widths[1]+2*columnGap)
	for i, st := range steps {
		padRow(b, widths, rows[i])
		writeLabelled(b, indent, "details", st.Details)
		writeLabelled(b, indent, "output", st.Output)
		for _, src := range st.Sources {
			writeLabelled(b, indent, "source", src.Text+" <"+src.URL+">")
		}
	}
}

// writeLabelled prints "label: text" with text's further lines under its first.
func writeLabelled(b *strings.Builder, indent, label, text string) {
	if text == "" {
		return
	}
	for i, line := range strings.Split(text, "\n") {
		if i == 0 {
			b.WriteString(indent + label + ": ")
		} else {
			b.WriteString(indent + strings.Repeat(" ", len(label)+2))
		}
		b.WriteString(termtext.Inert(line) + "\n")
	}
}
