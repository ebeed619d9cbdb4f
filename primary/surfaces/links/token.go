package links

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/turncli/turncli/primary/threadfeed"
)

// MaxTokenBytes bounds a token a request may carry; a longer one is refused before anything
// is decoded. Minted tokens stay far below it: an item key, a surface and an account id
// within their bounds make under 1 KiB.
const MaxTokenBytes = 2048

// claims is what a link's token says: who may take which decision on which item, until when.
type claims struct {
	Item     string `json:"i"`
	Surface  string `json:"s"`
	User     string `json:"u"`
	Decision string `json:"d"`
	Expires  int64  `json:"e"` // Unix seconds
}

func (c claims) identity() threadfeed.Identity {
	return threadfeed.Identity{Surface: c.Surface, ChatUserID: c.User}
}

func (c claims) expiry() time.Time { return time.Unix(c.Expires, 0).UTC() }

// Key signs and verifies tokens.
type Key struct{ secret []byte }

// NewKey returns the key of secret, which must hold at least 32 bytes.
func NewKey(secret []byte) (Key, error) {
	if len(secret) < 32 {
		return Key{}, errors.New("decision links: the key must hold at least 32 bytes")
	}
	return Key{secret: secret}, nil
}

// The purposes a key's MACs serve, so that one is never taken for another.
const (
	purposeToken   = "turncli decision link v1\n"
	purposeConfirm = "turncli decision link confirm v1\n"
)

func (k Key) mac(purpose, data string) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(purpose))
	m.Write([]byte(data))
	return m.Sum(nil)
}

// enc is strict: a token with any other spelling of the same bytes is not the one minted.
var enc = base64.RawURLEncoding.Strict()

// sign is the token of c: its JSON and its MAC, each base64url, joined by a dot.
func (k Key) sign(c claims) string {
	raw, _ := json.Marshal(c) // strings and an integer always marshal
	body := enc.EncodeToString(raw)
	return body + "." + enc.EncodeToString(k.mac(purposeToken, body))
}

// errInvalid is every token that was not minted here as it stands: too long, malformed,
// or with a signature that does not match. Its holder learns nothing more.
var errInvalid = errors.New("decision links: the link is not valid")

// verify returns the claims of a token this key signed, whatever their expiry.
func (k Key) verify(token string) (claims, error) {
	if len(token) > MaxTokenBytes {
		return claims{}, errInvalid
	}
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return claims{}, errInvalid
	}
	got, err := enc.DecodeString(sig)
	if err != nil || !hmac.Equal(got, k.mac(purposeToken, body)) {
		return claims{}, errInvalid
	}
	raw, err := enc.DecodeString(body)
	if err != nil {
		return claims{}, errInvalid
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil || c.Item == "" || c.Surface == "" || c.User == "" || c.Decision == "" {
		return claims{}, errInvalid
	}
	return c, nil
}

// confirmation is the value the confirming form of token's page carries back: only a page
// this key served holds it.
func (k Key) confirmation(token string) string {
	return enc.EncodeToString(k.mac(purposeConfirm, token))
}

// confirms reports whether value is token's confirmation.
func (k Key) confirms(token, value string) bool {
	got, err := enc.DecodeString(value)
	return err == nil && hmac.Equal(got, k.mac(purposeConfirm, token))
}
