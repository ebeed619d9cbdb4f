package responseapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/turncli/turncli/internal/bearer"
)

// credentialKey names the runtime credential a request carries, for counting the responses
// each credential holds: the hex SHA-256 of its bearer token, never the token itself. The role
// interceptor has already checked the token; empty means none was found.
func credentialKey(ctx context.Context) string {
	token, ok := bearer.FromIncomingContext(ctx)
	if !ok {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
