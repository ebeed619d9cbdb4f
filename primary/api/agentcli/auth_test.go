package agentcli_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/durationpb"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/catalog"
)

func randomToken() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// Section 3: every authentication failure is the same 401, on both routes.
func TestEveryAuthorityFailureIsTheSameUnauthorizedBody(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	done := s.call("test", "echo", `{}`)

	cases := []struct {
		name string
		auth []string // Authorization values; none: no header
	}{
		{"MissingHeaderIsRefused", nil},
		{"EmptyHeaderIsRefused", []string{""}},
		{"BearerWithoutSpaceIsRefused", []string{"Bearer" + s.grant}},
		{"LowerCaseBearerIsRefused", []string{"bearer " + s.grant}},
		{"UpperCaseBearerIsRefused", []string{"BEARER " + s.grant}},
		{"TwoSpacesAreRefused", []string{"Bearer  " + s.grant}},
		{"TabInsteadOfSpaceIsRefused", []string{"Bearer\t" + s.grant}},
		{"SchemeWithoutTokenIsRefused", []string{"Bearer "}},
		{"TokenWithInnerSpaceIsRefused", []string{"Bearer " + s.grant[:10] + " " + s.grant[10:]}},
		{"TokenWithInnerTabIsRefused", []string{"Bearer " + s.grant[:10] + "\t" + s.grant[10:]}},
		{"OtherSchemeIsRefused", []string{"Basic " + s.grant}},
		{"HeaderOver4096CharactersIsRefused", []string{"Bearer " + s.grant + strings.Repeat("A", 4097-len("Bearer ")-len(s.grant))}},
		{"UnknownTokenIsRefused", []string{"Bearer " + randomToken()}},
		{"TokenPrefixIsRefused", []string{"Bearer " + s.grant[:len(s.grant)-1]}},
		{"TwoAuthorizationHeadersAreRefused", []string{"Bearer " + s.grant, "Bearer " + s.grant}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireUnauthorized(t, s.post(`{"operation":"tools.list"}`, authorization(tc.auth...)))
			requireUnauthorized(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`), authorization(tc.auth...)))
			requireUnauthorized(t, s.get(done.CallID, "", authorization(tc.auth...)))
		})
	}
	t.Run("TheSameRequestsWithTheGrantSucceed", func(t *testing.T) {
		s.ok(s.post(`{"operation":"tools.list"}`))
		s.ok(s.get(done.CallID, ""))
	})
}

// Section 3: on GET, a call id that is not a UUID, unknown, or another response's is the same 401.
func TestReceiptThatIsNotTheCallersIsUnauthorized(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	mine := open(t, env)
	other := open(t, env)
	theirs := other.call("test", "echo", `{}`)
	other.await(theirs.CallID)

	for _, tc := range []struct{ name, id, query string }{
		{"AnotherResponsesCallIsUnauthorized", theirs.CallID, ""},
		{"AnotherResponsesCallIsUnauthorizedEvenWhenWaiting", theirs.CallID, "?wait=1"},
		{"NonUUIDCallIDIsUnauthorized", "not-a-uuid", ""},
		{"NonUUIDCallIDIsUnauthorizedBeforeWaitIsRead", "not-a-uuid", "?wait=abc"},
		{"TruncatedUUIDIsUnauthorized", theirs.CallID[:35], ""},
		{"UnknownCallIDIsUnauthorized", uuid.NewString(), ""},
		{"UnknownCallIDIsUnauthorizedEvenWhenWaiting", uuid.NewString(), "?wait=1"},
		{"UnknownCallIDIsUnauthorizedBeforeABadWaitIsJudged", uuid.NewString(), "?wait=abc"},
		{"AnotherResponsesCallIsUnauthorizedBeforeABadWaitIsJudged", theirs.CallID, "?wait=61"},
		{"EscapedSlashInTheCallIDIsUnauthorized", "a%2Fb", ""},
		{"EscapedNonUUIDCallIDIsUnauthorized", "%7Bnot-a-uuid%7D", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireUnauthorized(t, mine.get(tc.id, tc.query))
		})
	}
	t.Run("TheOwnerStillReadsIt", func(t *testing.T) {
		other.ok(other.get(theirs.CallID, ""))
	})
}

// Sections 3, 8 and 11: revocation applies to the very next request, and receipts are gone.
func TestClosedResponseIsUnauthorizedFromTheNextRequest(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	rc := s.call("test", "echo", `{"x":1}`)
	s.await(rc.CallID)

	s.closeResponse()

	requireUnauthorized(t, s.get(rc.CallID, ""))
	requireUnauthorized(t, s.get(rc.CallID, "?wait=5"))
	requireUnauthorized(t, s.post(`{"operation":"tools.list"}`))
	requireUnauthorized(t, s.post(`{"operation":"context.list"}`))
	requireUnauthorized(t, s.post(callOp(rc.CallID, "test", "echo", `{"x":1}`))) // not even a replay
	requireUnauthorized(t, s.post(describeOp("test", "echo")))
}

// Section 3: an expired grant is refused. The lifetime is one nanosecond, so the grant has
// expired by the time any request reaches the primary; no sleeping is needed.
func TestExpiredGrantIsUnauthorized(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env, func(r *responsev1.OpenResponseRequest) { r.GrantLifetime = durationpb.New(time.Nanosecond) })

	requireUnauthorized(t, s.post(`{"operation":"tools.list"}`))
	requireUnauthorized(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)))
	requireUnauthorized(t, s.get(uuid.NewString(), ""))
}

// readRecorder is a request body that records whether anyone asked for its bytes.
type readRecorder struct {
	r     io.Reader
	reads atomic.Int64
}

func (b *readRecorder) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}

// Section 3: authority is checked before the body is read. The client sends
// "Expect: 100-continue" and holds the body back until the server asks for it (Go's server
// asks exactly when the handler first reads the body), so a body that was never read is one
// whose Read was never called.
func TestRequestWithoutAuthorityIsRefusedWithoutReadingItsBody(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	s := open(t, env)
	bodies := []struct {
		name string
		body []byte
	}{
		{"MalformedBody", []byte(`{"operation":`)},
		{"TenMegabyteBody", bytes.Repeat([]byte(" "), 10<<20)},
		{"SeventyThousandByteBody", append([]byte(`{"operation":"tools.list"}`), bytes.Repeat([]byte(" "), 70000)...)},
		{"UnknownOperation", []byte(`{"operation":"tools.explode"}`)},
		{"NotJSONAtAll", []byte("\xff\xfe garbage")},
	}
	for _, b := range bodies {
		for _, auth := range []struct {
			name   string
			values []string
		}{
			{"WithoutHeader", nil},
			{"WithUnknownGrant", []string{"Bearer " + randomToken()}},
			{"WithMalformedHeader", []string{"bearer " + s.grant}},
		} {
			t.Run(b.name+auth.name+"IsRefusedUnread", func(t *testing.T) {
				body := &readRecorder{r: bytes.NewReader(b.body)}
				r, err := s.send(http.MethodPost, operationsPath, body, authorization(auth.values...),
					header("Expect", "100-continue"), func(r *http.Request) { r.ContentLength = int64(len(b.body)) })
				if err != nil {
					t.Fatal(err)
				}
				requireUnauthorized(t, r)
				if n := body.reads.Load(); n != 0 {
					t.Fatalf("the server read the body of an unauthorised request (%d reads)", n)
				}
			})
		}
	}
	t.Run("TheProbeSeesABodyTheServerDoesRead", func(t *testing.T) {
		body := &readRecorder{r: strings.NewReader(`{"operation":"tools.list"}`)}
		r, err := s.send(http.MethodPost, operationsPath, body, header("Expect", "100-continue"),
			func(r *http.Request) { r.ContentLength = int64(len(`{"operation":"tools.list"}`)) })
		if err != nil {
			t.Fatal(err)
		}
		s.ok(r)
		if body.reads.Load() == 0 {
			t.Fatal("the probe saw no read of a body the server used")
		}
	})
}

// Section 3, on a raw connection: the request announces a 10 MB body and sends none of it. A
// server that waited for the body before checking authority would never answer.
func TestUnauthorisedRequestIsAnsweredBeforeItsBodyArrives(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.AgentCLIURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // only against hanging on failure
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: agent-cli\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", operationsPath, randomToken(), 10<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	requireUnauthorized(t, reply{code: resp.StatusCode, body: body})
}

// Section 10: when a response ends its grant is revoked first, before admitted work is
// cancelled and joined: while Close waits for a call that ignores cancellation, every request
// is already refused.
func TestRevocationPrecedesTheEndOfAdmittedWork(t *testing.T) { // not parallel: waitBlocked
	started := make(chan struct{})
	release := make(chan struct{})
	stubborn := &fakeToolkit{name: "stubborn", description: "Ignores cancellation.",
		functions: []catalog.Function{{Name: "hold", Description: "Blocks until released."}},
		call: func(context.Context, catalog.Call) (catalog.Result, error) {
			close(started)
			<-release
			return catalog.Result{Value: true}, nil
		}}
	env := startEnv(t, stubborn)
	s := open(t, env)
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the response's own cleanup: the call ignores cancellation
	rc := s.call("stubborn", "hold", `{}`)
	<-started
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: s.id})
	}()
	waitBlocked(t, "(*Response).Close.func1(")
	requireUnauthorized(t, s.get(rc.CallID, ""))
	requireUnauthorized(t, s.post(`{"operation":"tools.list"}`))
	requireUnauthorized(t, s.post(callOp(uuid.NewString(), "test", "echo", `{}`)))
	free()
	<-closed
}

// Section 10: a grant lives at most 24 hours; a longer lifetime is refused when the response is
// opened, and no lifetime means 24 hours.
func TestGrantLifetimeIsAtMost24Hours(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	_, err := env.Runtime.OpenResponse(t.Context(), &responsev1.OpenResponseRequest{
		AgentName: "tester", GrantLifetime: durationpb.New(24*time.Hour + time.Second)})
	if err == nil {
		t.Fatal("a response with a 24 h 1 s grant was opened")
	}
	before := time.Now()
	resp, err := env.Runtime.OpenResponse(t.Context(), &responsev1.OpenResponseRequest{AgentName: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	t.Cleanup(func() {
		_, _ = env.Runtime.CloseResponse(context.Background(), &responsev1.CloseResponseRequest{ResponseId: resp.GetResponseId()})
	})
	expires := resp.GetGrantExpiresAt().AsTime()
	if expires.Before(before.Add(24*time.Hour).Truncate(time.Second)) || expires.After(after.Add(24*time.Hour)) {
		t.Fatalf("grant expires at %v, want 24 h after %v", expires, before)
	}
}
