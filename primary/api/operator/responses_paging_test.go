package operator_test

import (
	"context"
	"encoding/base64"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/primary/response"
)

// TestListResponsesPages: pages of page_size responses in id order cover every live response
// once; the last page has no token; page_size past 1000 and tokens this API never returned are
// INVALID_ARGUMENT.
func TestListResponsesPages(t *testing.T) {
	ctx := context.Background()
	e := startAPI(t)
	var want []string
	for range 7 {
		r, err := e.responses.Open(response.Spec{Agent: "code"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		want = append(want, r.ID())
	}
	slices.Sort(want)

	var got []string
	token, pages := "", 0
	for {
		page, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if n := len(page.GetResponses()); n > 3 || (n < 3 && page.GetNextPageToken() != "") {
			t.Fatalf("page %d holds %d responses, next token %q", pages, n, page.GetNextPageToken())
		}
		for _, r := range page.GetResponses() {
			got = append(got, r.GetId())
		}
		if token = page.GetNextPageToken(); token == "" {
			break
		}
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("%d pages listed %v, want %v in 3 pages", pages, got, want)
	}

	if _, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageSize: 1000}); err != nil {
		t.Errorf("page_size 1000: %v", err)
	}
	_, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageSize: 1001})
	wantCode(t, "page_size 1001", err, codes.InvalidArgument)
	for name, tok := range map[string]string{
		"NotBase64":    "%%%",
		"NoPrefix":     base64.RawURLEncoding.EncodeToString([]byte(want[0])),
		"NotAUUID":     base64.RawURLEncoding.EncodeToString([]byte("responses/v1/x")),
		"NULInside":    base64.RawURLEncoding.EncodeToString([]byte("responses/v1/\x00")),
		"PlainIDGiven": want[0],
	} {
		_, err := e.member.ListResponses(ctx, &operatorv1.ListResponsesRequest{PageToken: tok})
		wantCode(t, "page token "+name, err, codes.InvalidArgument)
	}
}
