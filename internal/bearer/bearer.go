// Package bearer reads the credential a request carries in its Authorization header or its
// gRPC "authorization" metadata, with one rule for every role (runtime, tool host, operator,
// Agent CLI grant): exactly one value, the exact prefix "Bearer " and a non-empty token
// without whitespace, the whole value at most MaxLength bytes. What the token may do is for
// the caller to decide; this package only says whether there is one.
package bearer

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/metadata"
)

// MaxLength bounds the whole Authorization value. Credentials this system issues are far
// shorter; the bound keeps a flood of long headers from costing a digest each.
const MaxLength = 4096

// Token returns the token of one Authorization value.
func Token(value string) (string, bool) {
	if len(value) > MaxLength {
		return "", false
	}
	token, ok := strings.CutPrefix(value, "Bearer ")
	if !ok || token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", false
	}
	return token, true
}

// FromHeader returns the token of an HTTP request's one Authorization header.
func FromHeader(h http.Header) (string, bool) {
	return only(h.Values("Authorization"))
}

// FromMetadata returns the token of the one "authorization" value of gRPC metadata.
func FromMetadata(md metadata.MD) (string, bool) {
	return only(md.Get("authorization"))
}

// FromIncomingContext returns the token of a gRPC request's metadata.
func FromIncomingContext(ctx context.Context) (string, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	return FromMetadata(md)
}

func only(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	return Token(values[0])
}
