package operator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
	"github.com/turncli/turncli/primary"
	"github.com/turncli/turncli/primary/operators"
	"github.com/turncli/turncli/primary/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dial connects to env's primary with token as the bearer credential ("" for none).
func dial(t *testing.T, env *testenv.Env, token string) *grpc.ClientConn {
	t.Helper()
	opts := []grpc.DialOption{
		grpc.WithContextDialer(env.DialPrimary),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}
	if token != "" {
		opts = append(opts,
			grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), method, req, reply, cc, opts...)
			}))
	}
	conn, err := grpc.NewClient("passthrough:///primary", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// adminToken reads the first admin's credential from the file endpoints.json names.
func adminToken(t *testing.T, env *testenv.Env) string {
	t.Helper()
	path := env.Primary.Endpoints().OperatorTokenFile
	if path == "" {
		t.Fatal("endpoints name no operator_token_file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func addOperator(t *testing.T, env *testenv.Env, name string, role store.OperatorRole) string {
	t.Helper()
	token, err := operators.Add(context.Background(), env.Primary.Internals().Store, name, role)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: err = %v, want %v", what, err, code)
	}
}

func TestOperatorService(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	admin := operatorv1.NewOperatorServiceClient(dial(t, env, adminToken(t, env)))
	memberToken := addOperator(t, env, "mia", store.RoleMember)
	member := operatorv1.NewOperatorServiceClient(dial(t, env, memberToken))
	conv := &conversationv1.Conversation{Channel: "room", Thread: "t1"}

	t.Run("FirstAdminCredentialFileIsPrivateAndNamedInEndpoints", func(t *testing.T) {
		path := env.Primary.Endpoints().OperatorTokenFile
		if path != operators.FirstAdminFile(env.StateDir) {
			t.Fatalf("operator_token_file = %q, want %q", path, operators.FirstAdminFile(env.StateDir))
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, want 0600", fi.Mode().Perm())
		}
		b, err := json.Marshal(env.Primary.Endpoints())
		if err != nil || !strings.Contains(string(b), `"operator_token_file":`) {
			t.Fatalf("endpoints JSON %s lacks operator_token_file (%v)", b, err)
		}
	})

	t.Run("WhoAmINamesTheCallerAndItsRole", func(t *testing.T) {
		for _, c := range []struct {
			client operatorv1.OperatorServiceClient
			name   string
			role   operatorv1.Role
		}{{admin, operators.FirstAdmin, operatorv1.Role_ROLE_ADMIN}, {member, "mia", operatorv1.Role_ROLE_MEMBER}} {
			got, err := c.client.WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if got.GetName() != c.name || got.GetRole() != c.role {
				t.Fatalf("WhoAmI = %v, want %s %v", got, c.name, c.role)
			}
		}
	})

	t.Run("MemberCannotSetConversationModeOrReadAuditLog", func(t *testing.T) {
		_, err := member.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Conversation: conv, Mode: operatorv1.Mode_MODE_AUTO})
		wantCode(t, "member SetConversationMode", err, codes.PermissionDenied)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "only an admin can set a conversation mode") {
			t.Fatalf("message %q does not say why", msg)
		}
		_, err = member.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{})
		wantCode(t, "member ListAuditLog", err, codes.PermissionDenied)
		got, err := member.GetConversationMode(ctx, &operatorv1.GetConversationModeRequest{Conversation: conv})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSetting().GetMode() != operatorv1.Mode_MODE_ASK || got.GetSetting().GetUpdatedAt() != nil {
			t.Fatalf("mode after refusal = %v, want the default ask", got)
		}
	})

	t.Run("AdminSetsConversationModeAndAuditNamesTheAdmin", func(t *testing.T) {
		set, err := admin.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Conversation: conv, Mode: operatorv1.Mode_MODE_AUTO})
		if err != nil {
			t.Fatal(err)
		}
		if set.GetSetting().GetMode() != operatorv1.Mode_MODE_AUTO || set.GetSetting().GetUpdatedBy() != operators.FirstAdmin {
			t.Fatalf("SetConversationMode = %v", set)
		}
		got, err := member.GetConversationMode(ctx, &operatorv1.GetConversationModeRequest{Conversation: conv})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSetting().GetMode() != operatorv1.Mode_MODE_AUTO || got.GetSetting().GetUpdatedBy() != operators.FirstAdmin {
			t.Fatalf("GetConversationMode = %v", got)
		}
		audit, err := admin.ListAuditLog(ctx, &operatorv1.ListAuditLogRequest{Subject: store.ConversationSubject("room", "t1")})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit.GetEntries()) != 1 {
			t.Fatalf("audit entries = %v, want one", audit.GetEntries())
		}
		e := audit.GetEntries()[0]
		var detail map[string]string
		if err := json.Unmarshal([]byte(e.GetDetailJson()), &detail); err != nil {
			t.Fatal(err)
		}
		if e.GetActor() != operators.FirstAdmin || e.GetAction() != store.ActionConversationModeSet ||
			detail["mode"] != "auto" || detail["previous"] != "ask" {
			t.Fatalf("audit entry = %v", e)
		}
	})

	t.Run("AuditLogPagesNewestFirst", func(t *testing.T) {
		for _, m := range []operatorv1.Mode{operatorv1.Mode_MODE_ADMIN, operatorv1.Mode_MODE_ASK} {
			if _, err := admin.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{
				Conversation: &conversationv1.Conversation{Channel: "paged"}, Mode: m}); err != nil {
				t.Fatal(err)
			}
		}
		f := &operatorv1.ListAuditLogRequest{Subject: store.ConversationSubject("paged", ""), PageSize: 1}
		first, err := admin.ListAuditLog(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		f.PageToken = first.GetNextPageToken()
		second, err := admin.ListAuditLog(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(first.GetEntries()) != 1 || len(second.GetEntries()) != 1 ||
			first.GetEntries()[0].GetId() <= second.GetEntries()[0].GetId() {
			t.Fatalf("pages %v then %v, want one entry each, newest first", first, second)
		}
	})

	t.Run("InvalidModeIsRefused", func(t *testing.T) {
		_, err := admin.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Conversation: conv})
		wantCode(t, "unspecified mode", err, codes.InvalidArgument)
		_, err = admin.SetConversationMode(ctx, &operatorv1.SetConversationModeRequest{Mode: operatorv1.Mode_MODE_AUTO})
		wantCode(t, "no channel", err, codes.InvalidArgument)
	})

	t.Run("RuntimeCredentialDoesNotAuthoriseOperatorService", func(t *testing.T) {
		_, err := operatorv1.NewOperatorServiceClient(env.Conn).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		wantCode(t, "WhoAmI with the runtime credential", err, codes.Unauthenticated)
	})

	t.Run("OperatorCredentialDoesNotAuthoriseRuntimeAPI", func(t *testing.T) {
		_, err := responsev1.NewResponseServiceClient(dial(t, env, adminToken(t, env))).OpenResponse(ctx, &responsev1.OpenResponseRequest{})
		wantCode(t, "OpenResponse with an operator credential", err, codes.Unauthenticated)
	})

	t.Run("MissingUnknownOrRemovedCredentialIsUnauthenticated", func(t *testing.T) {
		_, err := operatorv1.NewOperatorServiceClient(dial(t, env, "")).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		wantCode(t, "no credential", err, codes.Unauthenticated)
		_, err = operatorv1.NewOperatorServiceClient(dial(t, env, operators.NewCredential())).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		wantCode(t, "unknown credential", err, codes.Unauthenticated)
		gone := addOperator(t, env, "gone", store.RoleAdmin)
		if err := env.Primary.Internals().Store.RemoveOperator(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		_, err = operatorv1.NewOperatorServiceClient(dial(t, env, gone)).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
		wantCode(t, "removed operator", err, codes.Unauthenticated)
	})
}

func TestOperatorREST(t *testing.T) {
	env := testenv.Start(t)
	admin := adminToken(t, env)
	memberToken := addOperator(t, env, "mia", store.RoleMember)

	post := func(t *testing.T, token, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, env.HTTPURL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: response %q is not JSON: %v", path, b, err)
		}
		return resp.StatusCode, out
	}
	const setMode = "/v1/operator/conversations:setMode"

	t.Run("AdminSetsModeOverREST", func(t *testing.T) {
		code, out := post(t, admin, setMode, `{"conversation":{"channel":"room","thread":"t1"},"mode":"MODE_ADMIN"}`)
		setting, _ := out["setting"].(map[string]any)
		if code != http.StatusOK || setting["mode"] != "MODE_ADMIN" || setting["updated_by"] != operators.FirstAdmin {
			t.Fatalf("POST %s = %d %v", setMode, code, out)
		}
		req, _ := http.NewRequest(http.MethodGet, env.HTTPURL+"/v1/operator/conversations:getMode?"+
			url.Values{"conversation.channel": {"room"}, "conversation.thread": {"t1"}}.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+memberToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if s, _ := got["setting"].(map[string]any); resp.StatusCode != http.StatusOK || s["mode"] != "MODE_ADMIN" {
			t.Fatalf("GET mode = %d %v", resp.StatusCode, got)
		}
	})

	t.Run("MemberIsForbiddenOverREST", func(t *testing.T) {
		code, out := post(t, memberToken, setMode, `{"conversation":{"channel":"room"},"mode":"MODE_AUTO"}`)
		if code != http.StatusForbidden {
			t.Fatalf("POST as member = %d %v, want 403", code, out)
		}
	})

	t.Run("OperatorCredentialIsRefusedByRuntimeREST", func(t *testing.T) {
		code, out := post(t, admin, "/v1/responses", `{}`)
		if code != http.StatusUnauthorized {
			t.Fatalf("POST /v1/responses as operator = %d %v, want 401", code, out)
		}
	})

	t.Run("RuntimeCredentialIsRefusedByOperatorREST", func(t *testing.T) {
		code, out := post(t, env.Primary.RuntimeToken(), setMode, `{"conversation":{"channel":"room"},"mode":"MODE_AUTO"}`)
		if code != http.StatusUnauthorized {
			t.Fatalf("POST as runtime = %d %v, want 401", code, out)
		}
	})

	t.Run("NoCredentialIsRefusedBeforeTheBodyIsRead", func(t *testing.T) {
		// The request asks for "100 Continue" before sending its body. A server that read
		// the body would send it; the edge answers 401 first and never asks for the body.
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.HTTPURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n", setMode)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("status = %d, want 401 before the body was asked for", resp.StatusCode)
		}
	})
}

// A deployer that holds the first admin's credential (a Kubernetes Secret) gives it to the
// primary: the admin is created with it on a fresh store, and no credential file is written.
func TestAGivenFirstAdminCredentialIsUsedAndNoFileIsWritten(t *testing.T) {
	const given = "first-admin-credential-from-a-secret"
	env := testenv.Start(t, testenv.WithConfig(func(c *primary.Config) { c.FirstAdminCredential = given }))
	if _, err := os.Stat(operators.FirstAdminFile(env.StateDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the first admin's credential file: %v, want none", err)
	}
	if path := env.Primary.Endpoints().OperatorTokenFile; path != "" {
		t.Fatalf("endpoints name operator_token_file %q, want none", path)
	}
	got, err := operatorv1.NewOperatorServiceClient(dial(t, env, given)).WhoAmI(context.Background(), &operatorv1.WhoAmIRequest{})
	if err != nil || got.GetName() != operators.FirstAdmin || got.GetRole() != operatorv1.Role_ROLE_ADMIN {
		t.Fatalf("WhoAmI with the given credential = %v, %v; want the first admin", got, err)
	}
	_, err = operatorv1.NewOperatorServiceClient(dial(t, env, given+"x")).WhoAmI(context.Background(), &operatorv1.WhoAmIRequest{})
	wantCode(t, "WhoAmI with another credential", err, codes.Unauthenticated)
}
