package matrixtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
)

// registerPath is the shared-secret registration endpoint (Synapse's admin API, which Dendrite
// serves): GET gives a nonce, POST registers with a MAC over it.
const registerPath = "/_synapse/admin/v1/register"

// Password is the password of a user Register made: derived from the localpart so a test can
// log the user in again without keeping it. Dendrite wants at least 8 characters.
func Password(localpart string) string { return localpart + "-matrixtest-password" }

// DeviceID is the device a user Register made is logged in as: fixed, so logging in again
// replaces that device's access token rather than adding a device, as a bot with a pinned
// device does.
func DeviceID(localpart string) id.DeviceID {
	return id.DeviceID(strings.ToUpper(localpart) + "DEVICE")
}

// Register creates the user localpart (not an admin) through shared-secret registration and
// returns a client logged in as it on DeviceID(localpart).
func (s *Server) Register(ctx context.Context, localpart string) (*mautrix.Client, error) {
	if err := s.registerUser(ctx, localpart, Password(localpart)); err != nil {
		return nil, err
	}
	return s.Login(ctx, localpart)
}

// Login returns a new client logged in as the user localpart, which Register made, on
// DeviceID(localpart).
func (s *Server) Login(ctx context.Context, localpart string) (*mautrix.Client, error) {
	cli, err := mautrix.NewClient(s.URL(), "", "")
	if err != nil {
		return nil, err
	}
	_, err = cli.Login(ctx, &mautrix.ReqLogin{
		Type:             mautrix.AuthTypePassword,
		Identifier:       mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: localpart},
		Password:         Password(localpart),
		DeviceID:         DeviceID(localpart),
		StoreCredentials: true,
	})
	if err != nil {
		return nil, fmt.Errorf("matrixtest: log in %s: %w", localpart, err)
	}
	return cli, nil
}

// registerUser registers a user with the shared secret: it fetches a nonce, then posts the
// user with the MAC the endpoint checks.
func (s *Server) registerUser(ctx context.Context, user, password string) error {
	var nonce struct {
		Nonce string `json:"nonce"`
	}
	if err := s.adminCall(ctx, http.MethodGet, nil, &nonce); err != nil {
		return fmt.Errorf("matrixtest: registration nonce: %w", err)
	}
	body := map[string]any{
		"nonce":    nonce.Nonce,
		"username": user,
		"password": password,
		"admin":    false,
		"mac":      registrationMAC(nonce.Nonce, user, password, false),
	}
	if err := s.adminCall(ctx, http.MethodPost, body, nil); err != nil {
		return fmt.Errorf("matrixtest: register %s: %w", user, err)
	}
	return nil
}

// registrationMAC is the hex HMAC-SHA1, keyed with the shared secret, of the nonce, user,
// password and "admin" or "notadmin", separated by NUL bytes (Synapse's shared-secret
// registration, as Dendrite checks it; the optional user type is left out).
func registrationMAC(nonce, user, password string, admin bool) string {
	role := "notadmin"
	if admin {
		role = "admin"
	}
	mac := hmac.New(sha1.New, []byte(sharedSecret))
	mac.Write([]byte(strings.Join([]string{nonce, user, password, role}, "\x00")))
	return hex.EncodeToString(mac.Sum(nil))
}

// adminCall sends body (if any) as JSON to the registration endpoint and decodes a 200
// answer into out (if any); any other status is an error carrying the answer.
func (s *Server) adminCall(ctx context.Context, method string, body, out any) error {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL()+registerPath, in)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, resp.Status, bytes.TrimSpace(answer))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}
