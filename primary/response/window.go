package response

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"

	"github.com/turncli/turncli/internal/fault"
	"github.com/turncli/turncli/internal/fieldrule"
	"github.com/turncli/turncli/primary/store"
)

type windowState uint8

const (
	windowOpen     windowState = iota // its command runs
	windowDraining                    // its command has exited; admitted work is settling
	windowClosed                      // refuses everything
)

// Window admits the CLI calls of one Bash command. Its token (the value of
// MINDROOM_AGENT_CLI_WINDOW) is random, so one command cannot join another's window by guessing.
// Fields are guarded by the owning Response's mutex.
type Window struct {
	token      string
	bashCallID string
	state      windowState
	pending    int // admitted calls and describes not yet settled
	receipts   []*receipt
	closed     chan struct{}
	// checkpoint is the runtime's opaque checkpoint for the command (RunBash's), saved with
	// any call of the window that waits for confirmation so a continuation can hand it back.
	checkpoint []byte
}

// WindowOption sets something about a window when it opens.
type WindowOption func(*Window)

// MaxCheckpointBytes bounds a window's checkpoint: what the store keeps with a call.
const MaxCheckpointBytes = store.MaxCheckpoint

// WithCheckpoint gives the window the runtime's checkpoint for its command (a private copy).
func WithCheckpoint(checkpoint []byte) WindowOption {
	return func(w *Window) { w.checkpoint = bytes.Clone(checkpoint) }
}

// BashCallID is the runtime's id of the command.
func (w *Window) BashCallID() string { return w.bashCallID }

func (w *Window) closeLocked() {
	if w.state != windowClosed {
		w.state = windowClosed
		close(w.closed)
	}
}

// newWindowToken is a window's unguessable token.
func newWindowToken() string {
	var raw [24]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// OpenWindow opens a window for a Bash command with the runtime's id bashCallID, unique within
// the response.
func (r *Response) OpenWindow(bashCallID string, opts ...WindowOption) (*Window, error) {
	if err := fieldrule.Check(fieldrule.BashCallID, "bash_call_id", bashCallID); err != nil {
		return nil, err
	}
	w := &Window{token: newWindowToken(), bashCallID: bashCallID, closed: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	if len(w.checkpoint) > MaxCheckpointBytes {
		return nil, fault.Newf(fault.InvalidArgument, "checkpoint must be at most %d bytes", MaxCheckpointBytes)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errResponseClosed
	}
	if _, dup := r.bashIDs[bashCallID]; dup {
		return nil, fault.New(fault.Conflict, "bash_call_id is already used in this response")
	}
	if r.windows == nil {
		r.windows = make(map[string]*Window)
		r.bashIDs = make(map[string]*Window)
	}
	r.windows[w.token] = w
	r.bashIDs[bashCallID] = w
	return w, nil
}

// WindowByBashCallID finds a window the runtime opened.
func (r *Response) WindowByBashCallID(id string) (*Window, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.bashIDs[id]
	return w, ok
}

// AgentCLIEnv is the environment a shell of window w gets: where to call, the grant, and the
// window. It holds the grant: give it only to that shell.
func (r *Response) AgentCLIEnv(w *Window) (map[string]string, error) {
	env := r.agentCLIEnvNoURL(w)
	url, err := r.mgr.cfg.Shells.AgentCLIURL(r.spec.WorkerKey, &r.binding)
	if err != nil {
		return nil, err
	}
	env["MINDROOM_AGENT_CLI_URL"] = url
	return env, nil
}

func (r *Response) agentCLIEnvNoURL(w *Window) map[string]string {
	return map[string]string{
		"MINDROOM_AGENT_CLI_TOKEN":  r.token,
		"MINDROOM_AGENT_CLI_WINDOW": w.token,
	}
}

// DrainWindow is called when w's command has exited. Calls arriving while admitted work is
// unsettled still join w; once nothing admitted remains, w closes atomically under the
// admission lock. DrainWindow returns after that, with every receipt w admitted.
func (r *Response) DrainWindow(w *Window) []ReceiptView {
	r.mu.Lock()
	if w.state == windowOpen {
		w.state = windowDraining
		if w.pending == 0 {
			w.closeLocked()
		}
	}
	r.mu.Unlock()
	<-w.closed
	r.mu.Lock()
	defer r.mu.Unlock()
	views := make([]ReceiptView, len(w.receipts))
	for i, rc := range w.receipts {
		views[i] = rc.view()
	}
	return views
}

// WindowView is a window as it stands (see ViewWindow).
type WindowView struct {
	// State is "open" (its command runs), "draining" (its command exited; admitted work is
	// settling) or "closed".
	State string
	// Unsettled counts the window's admitted calls and describes not settled yet.
	Unsettled int
	// Receipts are every call the window admitted so far, in admission order.
	Receipts []ReceiptView
}

// ViewWindow returns w as it stands. It never waits for calls or commands.
func (r *Response) ViewWindow(w *Window) WindowView {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := WindowView{State: windowStateNames[w.state], Unsettled: w.pending, Receipts: make([]ReceiptView, len(w.receipts))}
	for i, rc := range w.receipts {
		v.Receipts[i] = rc.view()
	}
	return v
}
