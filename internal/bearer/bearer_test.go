package bearer

import (
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestToken(t *testing.T) {
	longest := "Bearer " + strings.Repeat("a", MaxLength-len("Bearer "))
	for _, tc := range []struct {
		value, token string
		ok           bool
	}{
		{"Bearer abc", "abc", true},
		{longest, longest[len("Bearer "):], true},
		{longest + "a", "", false}, // one byte over MaxLength
		{"Bearer ", "", false},
		{"bearer abc", "", false},
		{"Basic abc", "", false},
		{"Bearer  abc", "", false},
		{"Bearer abc ", "", false},
		{"Bearer a\tb", "", false},
		{"Bearer a\nb", "", false},
		{"abc", "", false},
		{"", "", false},
	} {
		token, ok := Token(tc.value)
		if token != tc.token || ok != tc.ok {
			t.Errorf("Token(%.20q…) = %q, %v; want %q, %v", tc.value, token, ok, tc.token, tc.ok)
		}
	}
}

// TestExactlyOneValue: a request with two Authorization values, or none, carries no token,
// over HTTP and gRPC alike.
func TestExactlyOneValue(t *testing.T) {
	for _, values := range [][]string{nil, {"Bearer a", "Bearer a"}, {"Bearer a", "Bearer b"}} {
		h := http.Header{}
		for _, v := range values {
			h.Add("Authorization", v)
		}
		if token, ok := FromHeader(h); ok {
			t.Errorf("FromHeader(%q) = %q", values, token)
		}
		md := metadata.MD{}
		for _, v := range values {
			md.Append("authorization", v)
		}
		if token, ok := FromMetadata(md); ok {
			t.Errorf("FromMetadata(%q) = %q", values, token)
		}
	}
	h := http.Header{"Authorization": {"Bearer a"}}
	if token, ok := FromHeader(h); !ok || token != "a" {
		t.Errorf("FromHeader(one) = %q, %v", token, ok)
	}
	if token, ok := FromMetadata(metadata.Pairs("authorization", "Bearer a")); !ok || token != "a" {
		t.Errorf("FromMetadata(one) = %q, %v", token, ok)
	}
}
