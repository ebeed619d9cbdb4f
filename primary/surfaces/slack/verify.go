package slack

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	goslack "github.com/slack-go/slack"
)

// The reasons a request is refused with 401. They name the check that failed and nothing else.
const (
	reasonMissingSignature = "missing signature headers"
	reasonStale            = "timestamp is too old"
	reasonBadSignature     = "invalid signature"
	reasonReplayed         = "replayed request"
)

// verify checks that body was signed by Slack with secret within the last five minutes and was
// not seen before. It returns the reason of a refusal, or "" for a request to serve.
func verify(header http.Header, body []byte, secret string, replays *replayGuard) (status int, reason string) {
	sv, err := goslack.NewSecretsVerifier(header, secret)
	switch {
	case errors.Is(err, goslack.ErrMissingHeaders):
		return http.StatusUnauthorized, reasonMissingSignature
	case errors.Is(err, goslack.ErrExpiredTimestamp):
		return http.StatusUnauthorized, reasonStale
	case err != nil:
		return http.StatusUnauthorized, reasonBadSignature
	}
	if _, err := sv.Write(body); err != nil {
		return http.StatusUnauthorized, reasonBadSignature
	}
	if err := sv.Ensure(); err != nil {
		return http.StatusUnauthorized, reasonBadSignature
	}
	// The verifier accepted both headers, so they parse. The replay key is the signature's bytes,
	// not its text: hex accepts either case, and a replay must not pass by changing it.
	sent, _ := strconv.ParseInt(header.Get("X-Slack-Request-Timestamp"), 10, 64)
	sig, _ := hex.DecodeString(strings.TrimPrefix(header.Get("X-Slack-Signature"), "v0="))
	switch replays.accept(string(sig), time.Unix(sent, 0)) {
	case replayed:
		return http.StatusUnauthorized, reasonReplayed
	case guardFull:
		return http.StatusServiceUnavailable, "too many requests to check for replays; try again"
	}
	return http.StatusOK, ""
}
