package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
	"github.com/turncli/turncli/internal/pgtest"
	"github.com/turncli/turncli/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// runCmd runs the command in-process and returns its exit code and output.
func runCmd(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func whoAmI(t *testing.T, env *testenv.Env, token string) (*operatorv1.WhoAmIResponse, error) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///primary",
		grpc.WithContextDialer(env.DialPrimary), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	return operatorv1.NewOperatorServiceClient(conn).WhoAmI(ctx, &operatorv1.WhoAmIRequest{})
}

func TestOperatorsCommand(t *testing.T) {
	env := testenv.Start(t)
	state := env.StateDir

	t.Run("AddedOperatorCallsWithThePrintedCredential", func(t *testing.T) {
		code, out, errOut := runCmd("operators", "add", "mia", "--role", "member", "--state-dir", state)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		got, err := whoAmI(t, env, strings.TrimSpace(out))
		if err != nil {
			t.Fatal(err)
		}
		if got.GetName() != "mia" || got.GetRole() != operatorv1.Role_ROLE_MEMBER {
			t.Fatalf("WhoAmI = %v", got)
		}
	})

	t.Run("CredentialFileIsPrivateAndWorks", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ops.token")
		code, out, errOut := runCmd("operators", "add", "ops", "--role", "admin", "--state-dir", state, "--credential-file", path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if token := strings.TrimSpace(string(b)); strings.Contains(out, token) {
			t.Fatal("the credential was printed as well as written")
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, want 0600", fi.Mode().Perm())
		}
		got, err := whoAmI(t, env, strings.TrimSpace(string(b)))
		if err != nil || got.GetRole() != operatorv1.Role_ROLE_ADMIN {
			t.Fatalf("WhoAmI = %v, %v", got, err)
		}
	})

	t.Run("DuplicateNameFails", func(t *testing.T) {
		if code, _, errOut := runCmd("operators", "add", "admin", "--role", "member", "--state-dir", state); code != 1 || !strings.Contains(errOut, "already exists") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})

	t.Run("BadRoleIsAUsageError", func(t *testing.T) {
		if code, _, _ := runCmd("operators", "add", "x", "--role", "owner", "--state-dir", state); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})

	t.Run("ListShowsOperatorsAndRemoveRevokes", func(t *testing.T) {
		code, out, errOut := runCmd("operators", "add", "temp", "--role", "member", "--state-dir", state)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		token := strings.TrimSpace(out)
		code, list, _ := runCmd("operators", "list", "--state-dir", state)
		for _, want := range []string{"admin", "mia", "ops", "temp"} {
			if code != 0 || !strings.Contains(list, want+" ") {
				t.Fatalf("list (exit %d) lacks %s:\n%s", code, want, list)
			}
		}
		if code, _, errOut := runCmd("operators", "remove", "temp", "--state-dir", state); code != 0 {
			t.Fatalf("remove: exit %d: %s", code, errOut)
		}
		if _, err := whoAmI(t, env, token); err == nil {
			t.Fatal("a removed operator's credential still works")
		}
		if code, _, _ := runCmd("operators", "remove", "temp", "--state-dir", state); code != 1 {
			t.Fatalf("second remove: exit %d, want 1", code)
		}
	})
}

func TestOperatorsCommandOnPostgreSQL(t *testing.T) {
	cluster := pgtest.StartForTest(t)
	url, err := cluster.CreateDatabase(context.Background(), "operators")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if code, _, errOut := runCmd("operators", "add", "noor", "--role", "admin", "--state-dir", state, "--store", url); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd("operators", "list", "--store", url)
	if code != 0 || !strings.Contains(out, "noor") || !strings.Contains(out, "admin") {
		t.Fatalf("list: exit %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "turncli.db")); !os.IsNotExist(err) {
		t.Fatalf("a SQLite file appeared in the state directory: %v", err)
	}
	if code, _, errOut := runCmd("operators", "remove", "noor", "--store", url); code != 0 {
		t.Fatalf("remove: exit %d: %s", code, errOut)
	}
	if _, out, _ := runCmd("operators", "list", "--store", url); strings.Contains(out, "noor") {
		t.Fatalf("removed operator still listed: %q", out)
	}
}
