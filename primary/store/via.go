package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Via names the chat account a decision was relayed from: a runtime relays what a person did
// on a chat surface, as the person the account is linked to (IdentityLinks).
type Via struct {
	Surface    string `json:"surface"`
	ChatUserID string `json:"chat_user_id"`
}

type viaKey struct{}

// WithVia returns ctx marking what is decided under it as relayed from the account v: every
// audit entry a transition under it writes says so in its detail ("via"), so the log tells a
// relayed decision from one made on the operator API or the dashboard, and names the account.
func WithVia(ctx context.Context, v Via) context.Context {
	return context.WithValue(ctx, viaKey{}, v)
}

// ViaOf returns the account ctx was marked with by WithVia; ok is false when it was not.
func ViaOf(ctx context.Context) (v Via, ok bool) {
	v, ok = ctx.Value(viaKey{}).(Via)
	return v, ok
}

// withVia adds ctx's account, if any, to an audit detail (a JSON object) as "via".
func withVia(ctx context.Context, detail []byte) ([]byte, error) {
	v, ok := ViaOf(ctx)
	if !ok {
		return detail, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(detail, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("store: audit detail is not a JSON object")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields["via"] = b
	return json.Marshal(fields)
}

// ViaOfAudit returns the account an audit entry's decision was relayed from, if it was.
func ViaOfAudit(e AuditEntry) (v Via, ok bool) {
	var d struct {
		Via *Via `json:"via"`
	}
	if json.Unmarshal(e.Detail, &d) != nil || d.Via == nil {
		return Via{}, false
	}
	return *d.Via, true
}
