package matrixtest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/turncli/turncli/internal/matrixtest"
)

func TestStartForTest(t *testing.T) {
	ctx := context.Background()
	s := matrixtest.StartForTest(t)

	t.Run("ARegisteredUserIsLoggedInOnItsDevice", func(t *testing.T) {
		cli := s.NewUser(t, "alice")
		who, err := cli.Whoami(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if who.UserID != "@alice:localhost" || who.DeviceID != "ALICEDEVICE" {
			t.Fatalf("whoami = %s on %s, want @alice:localhost on ALICEDEVICE", who.UserID, who.DeviceID)
		}
	})

	t.Run("OpenRegistrationIsRefused", func(t *testing.T) {
		body := `{"username":"mallory","password":"mallory-password","auth":{"type":"m.login.dummy"}}`
		resp, err := http.Post(s.URL()+"/_matrix/client/v3/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct{ ErrCode, Error string }
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusForbidden || answer.ErrCode != "M_FORBIDDEN" ||
			answer.Error != `Registration is disabled on "localhost"` {
			t.Fatalf("open registration: %s %+v, want 403 M_FORBIDDEN", resp.Status, answer)
		}
	})

	t.Run("AStoppedServerAnswersNothing", func(t *testing.T) {
		own := matrixtest.StartForTest(t)
		own.Stop()
		if _, err := http.Get(own.URL() + "/_matrix/client/versions"); err == nil {
			t.Fatal("a stopped server answered")
		}
	})
}
