package slack

import (
	"sync"
	"time"
)

// signatureWindow is how far a request's timestamp may be from now; slack-go's verifier refuses
// anything further, so a signature need only be remembered this long after its timestamp.
const signatureWindow = 5 * time.Minute

// maxRemembered bounds the signatures kept for the window (about 170 requests a second for five
// minutes, a few MiB). Past it new requests are refused rather than old signatures forgotten, so
// a flood can delay answers but never reopen a replay.
const maxRemembered = 50_000

// replayGuard refuses a signed request seen before. Slack signs the timestamp and the whole body,
// and a genuine click or submission carries its own action_ts and trigger_id, so two genuine
// requests never share a signature: a repeated signature is a replay.
type replayGuard struct {
	now func() time.Time
	max int

	mu sync.Mutex
	// seen maps each accepted signature to the timestamp it was signed with.
	seen map[string]time.Time
}

func newReplayGuard(max int, now func() time.Time) *replayGuard {
	return &replayGuard{now: now, max: max, seen: map[string]time.Time{}}
}

type replayVerdict int

const (
	firstSeen replayVerdict = iota
	replayed
	guardFull
)

// accept remembers signature, signed at sent, and says whether it was new.
func (g *replayGuard) accept(signature string, sent time.Time) replayVerdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.seen[signature]; ok {
		return replayed
	}
	if len(g.seen) >= g.max {
		g.forgetExpired()
	}
	if len(g.seen) >= g.max {
		return guardFull
	}
	g.seen[signature] = sent
	return firstSeen
}

// forgetExpired drops the signatures the verifier would refuse anyway. It runs only when the
// guard is full, so its cost is spread over max requests.
func (g *replayGuard) forgetExpired() {
	now := g.now()
	for sig, sent := range g.seen {
		if now.Sub(sent) > signatureWindow {
			delete(g.seen, sig)
		}
	}
}
