package codex

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/turncli/turncli/client"
)

// driver follows one turn: it reads the server's notifications in order (one goroutine, the
// connection's read loop) and answers its requests, each in a goroutine of its own so an
// approval waiting for people holds up nothing else.
type driver struct {
	agent *client.Agent
	conn  *rpcConn
	out   *printer
	// askCtx ends the waits of approval requests when the driver stops.
	askCtx context.Context
	asking sync.WaitGroup

	turnDone chan struct{} // closed when the turn completed

	mu           sync.Mutex
	threadID     string
	turnID       string
	report       string // the last agent message of the turn
	inputTokens  int64
	outputTokens int64
	turnStatus   string
	errors       []string
	fileChanges  map[string]json.RawMessage // changes of file change items, by item id
}

func newDriver(ctx context.Context, agent *client.Agent, conn *rpcConn, out *printer) *driver {
	return &driver{agent: agent, conn: conn, out: out, askCtx: ctx, turnDone: make(chan struct{}), fileChanges: map[string]json.RawMessage{}}
}

// onNotify follows the turn.
func (d *driver) onNotify(m message) {
	switch m.Method {
	case "item/started", "item/completed":
		var p struct {
			Item item `json:"item"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		if m.Method == "item/started" {
			if p.Item.Type == "fileChange" {
				d.mu.Lock()
				d.fileChanges[p.Item.ID] = p.Item.Changes
				d.mu.Unlock()
			}
			d.out.started(p.Item)
			return
		}
		if p.Item.Type == "agentMessage" {
			d.mu.Lock()
			d.report = p.Item.Text
			d.mu.Unlock()
		}
		d.out.completed(p.Item)
	case "thread/tokenUsage/updated":
		var p struct {
			TokenUsage struct {
				Total struct {
					InputTokens  int64 `json:"inputTokens"`
					OutputTokens int64 `json:"outputTokens"`
				} `json:"total"`
			} `json:"tokenUsage"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			d.mu.Lock()
			d.inputTokens, d.outputTokens = p.TokenUsage.Total.InputTokens, p.TokenUsage.Total.OutputTokens
			d.mu.Unlock()
		}
	case "error":
		var p struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
			WillRetry bool `json:"willRetry"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		if p.WillRetry {
			d.out.line("retry", "%s", p.Error.Message)
			return
		}
		d.out.line("error", "%s", p.Error.Message)
		d.addError(p.Error.Message)
	case "warning", "configWarning", "deprecationNotice":
		var p struct {
			Message string `json:"message"`
			Summary string `json:"summary"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Message+p.Summary != "" {
			d.out.line("warning", "%s", p.Message+p.Summary)
		}
	case "turn/completed":
		var p struct {
			Turn struct {
				ID     string `json:"id"`
				Status string `json:"status"`
				Items  []item `json:"items"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"turn"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		d.mu.Lock()
		if d.turnStatus != "" {
			d.mu.Unlock()
			return
		}
		d.turnID, d.turnStatus = p.Turn.ID, p.Turn.Status
		for _, it := range p.Turn.Items {
			if it.Type == "agentMessage" && d.report == "" {
				d.report = it.Text
			}
		}
		// The turn's error was usually an error notification already.
		if p.Turn.Error != nil && p.Turn.Error.Message != "" && !slices.Contains(d.errors, p.Turn.Error.Message) {
			d.errors = append(d.errors, p.Turn.Error.Message)
		}
		d.mu.Unlock()
		close(d.turnDone)
	case "turn/started":
		var p struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			d.mu.Lock()
			d.turnID = p.Turn.ID
			d.mu.Unlock()
		}
	}
}

func (d *driver) addError(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errors = append(d.errors, msg)
}

// onRequest answers a request of the server in a goroutine of its own.
func (d *driver) onRequest(m message) {
	d.asking.Add(1)
	go func() {
		defer d.asking.Done()
		d.answer(m)
	}()
}

func (d *driver) answer(m message) {
	a, isApproval, err := approvalOf(m, func(itemID string) any {
		d.mu.Lock()
		defer d.mu.Unlock()
		if c := d.fileChanges[itemID]; len(c) > 0 {
			return c
		}
		return nil
	})
	if err != nil {
		d.out.line("error", "%v", err)
		_ = d.conn.reply(m.ID, nil, err.Error())
		return
	}
	if !isApproval {
		result, errMsg := otherAnswer(m)
		_ = d.conn.reply(m.ID, result, errMsg)
		return
	}
	d.out.line("approval", "asking the conversation's people: %s %s", a.tool, summary(a.input))
	v := ask(d.askCtx, d.agent, a.tool, a.input, a.toolUseID)
	if v.allow {
		d.out.line("approval", "allowed: %s", a.tool)
	} else {
		d.out.line("approval", "declined: %s: %s", a.tool, v.why)
	}
	_ = d.conn.reply(m.ID, a.answer(v), "")
}

// summary is the input of an approval in one short line for the log.
func summary(input map[string]any) string {
	if c, ok := input["command"].(string); ok {
		return shorten(c)
	}
	b, _ := json.Marshal(input)
	return shorten(string(b))
}
