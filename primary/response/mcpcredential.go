package response

import (
	"github.com/turncli/turncli/internal/fault"
)

// The gateway MCP credential: the bearer token a runtime hands a foreground engine (Claude
// Code, Codex) with the primary's gateway MCP URL, so that the engine reaches the response's
// native catalog over MCP. It is the response's second credential and is kept apart from its
// Agent CLI grant: each lives in its own grant index, so neither opens the other's door. Like
// the grant it is issued once, kept only as a digest, redacted while live, expires with the
// grant and is revoked when the response closes (right after the grant, before any work is
// cancelled).

// errMCPIssued refuses a second MCP credential: a token is shown once, as a grant is.
var errMCPIssued = fault.New(fault.FailedPrecondition, "this response's gateway MCP credential was already issued")

// MintMCPCredential issues the response's gateway MCP credential and returns its token, which
// nothing keeps. It fails on a closed response and when the credential was already issued.
func (r *Response) MintMCPCredential() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return "", errResponseClosed
	case r.mcpIssued:
		return "", errMCPIssued
	}
	// Under mu, so Close either sees the digest and revokes it or refuses the mint above.
	token, digest := r.mgr.mcpGrants.MintUntil(r, r.expires)
	r.mcpDigest, r.mcpIssued = digest, true
	return token, nil
}

// AuthenticateMCP returns the response whose gateway MCP credential token is, if it is live.
// An Agent CLI grant is not one.
func (m *Manager) AuthenticateMCP(token string) (*Response, bool) {
	return m.mcpGrants.Resolve(token)
}

// revokeMCPLocked forgets the MCP credential, if one was issued; r.mu is held and r.closed set.
func (r *Response) revokeMCPLocked() {
	if r.mcpIssued {
		r.mgr.mcpGrants.Revoke(r.mcpDigest)
	}
}
