package responseapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"google.golang.org/grpc/metadata"
)

// credentialKey names the runtime credential a request carries, for counting the responses
// each credential holds: the hex SHA-256 of its bearer token, never the token itself. The role
// interceptor has already checked the token; empty means none was found.
func credentialKey(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) != 1 {
		return ""
	}
	token, ok := strings.CutPrefix(values[0], "Bearer ")
	if !ok || token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
