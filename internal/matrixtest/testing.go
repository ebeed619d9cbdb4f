package matrixtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"maunium.net/go/mautrix"
)

// BinEnv names the variable holding the path of the Dendrite binary (scripts/dendrite.sh
// prints it).
const BinEnv = "TURNCLI_DENDRITE"

// RequireEnv names the variable that, set to 1, turns a missing Dendrite into a failure.
const RequireEnv = "TURNCLI_REQUIRE_DENDRITE"

// startTimeout bounds starting a server, which takes seconds: a hung start fails the test
// instead of running into the test binary's timeout.
const startTimeout = 2 * time.Minute

// StartForTest starts a server of the test's own in a temporary directory, stopped when the
// test ends. It skips the test when no Dendrite binary is given or it cannot start, or fails
// it when RequireEnv is 1.
func StartForTest(t testing.TB) *Server {
	t.Helper()
	bin, err := binary()
	if err != nil {
		unavailable(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Start(ctx, bin, t.TempDir())
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.Stop) // before TempDir's removal: cleanups run last first
	return s
}

// binary is the Dendrite binary BinEnv names, if it is an executable file.
func binary() (string, error) {
	bin := os.Getenv(BinEnv)
	if bin == "" {
		return "", fmt.Errorf("%s is not set (scripts/dendrite.sh builds Dendrite and prints its path)", BinEnv)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", BinEnv, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s is not an executable file", BinEnv, bin)
	}
	return bin, nil
}

// NewUser registers the user localpart and returns a client logged in as it; it fails the
// test if it cannot.
func (s *Server) NewUser(t testing.TB, localpart string) *mautrix.Client {
	t.Helper()
	cli, err := s.Register(context.Background(), localpart)
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// RestartForTest restarts the server (see Restart); it fails the test if it cannot.
func (s *Server) RestartForTest(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
}

// unavailable ends a test that needs Dendrite when none could be started: a skip on a
// developer's machine, a failure where RequireEnv is 1.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("Dendrite is required (%s=1): %v", RequireEnv, err)
	}
	t.Skipf("Dendrite unavailable, test skipped (set %s=1 to fail instead): %v", RequireEnv, err)
}
