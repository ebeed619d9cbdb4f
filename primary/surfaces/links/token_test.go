package links

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func testKey(t *testing.T) Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// claimsOfLength are claims whose token is exactly n bytes long; ok is false when no token
// has that length (unpadded base64 has no length of 1 modulo 4).
func claimsOfLength(k Key, n int) (c claims, ok bool) {
	for user := 1; user < n; user++ {
		c := claims{Item: "approval/1", Surface: "email", User: strings.Repeat("u", user), Decision: "deny", Expires: 1}
		if len(k.sign(c)) == n {
			return c, true
		}
	}
	return claims{}, false
}

func TestATokenIsVerifiedUpToItsLengthLimit(t *testing.T) {
	k := testKey(t)
	t.Run("AtTheLimitItVerifies", func(t *testing.T) {
		c, ok := claimsOfLength(k, MaxTokenBytes)
		if !ok {
			t.Fatalf("no token is %d bytes", MaxTokenBytes)
		}
		if got, err := k.verify(k.sign(c)); err != nil || got != c {
			t.Fatalf("verify: %+v, %v; want %+v", got, err, c)
		}
	})
	t.Run("PastTheLimitItIsNotValid", func(t *testing.T) {
		// The shortest token longer than the limit, however well signed.
		for n := MaxTokenBytes + 1; n < MaxTokenBytes+4; n++ {
			c, ok := claimsOfLength(k, n)
			if !ok {
				continue
			}
			if _, err := k.verify(k.sign(c)); !errors.Is(err, errInvalid) {
				t.Fatalf("a %d-byte token: %v; want it not valid", n, err)
			}
			return
		}
		t.Fatal("no token is a few bytes past the limit")
	})
}

func TestATokenOfAnotherKeyIsNotValid(t *testing.T) {
	other, err := NewKey(bytes.Repeat([]byte("o"), 32))
	if err != nil {
		t.Fatal(err)
	}
	token := other.sign(claims{Item: "approval/1", Surface: "email", User: "ann", Decision: "approve", Expires: 1})
	if _, err := testKey(t).verify(token); !errors.Is(err, errInvalid) {
		t.Fatalf("verify: %v; want not valid", err)
	}
}

func TestAConfirmationIsBoundToItsToken(t *testing.T) {
	k := testKey(t)
	if !k.confirms("a.b", k.confirmation("a.b")) || k.confirms("a.c", k.confirmation("a.b")) || k.confirms("a.b", "") {
		t.Fatal("a confirmation must confirm its own token and no other")
	}
}

func TestAKeyNeedsThirtyTwoBytes(t *testing.T) {
	if _, err := NewKey(bytes.Repeat([]byte("k"), 31)); err == nil || err.Error() != "decision links: the key must hold at least 32 bytes" {
		t.Fatalf("a 31-byte key: %v", err)
	}
}

func TestSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Settings
		want Settings
		err  string
	}{
		{name: "ZeroExpiryIsTheDefault", in: Settings{}, want: Settings{Expiry: DefaultExpiry}},
		{name: "TrailingSlashIsDropped", in: Settings{BaseURL: "https://t.example.org/", Expiry: MinExpiry},
			want: Settings{BaseURL: "https://t.example.org", Expiry: MinExpiry}},
		{name: "LongestExpiry", in: Settings{Expiry: MaxExpiry}, want: Settings{Expiry: MaxExpiry}},
		{name: "ExpiryBelowAMinute", in: Settings{Expiry: MinExpiry - time.Second}, err: "decision links: the expiry must be 1m0s..720h0m0s, not 59s"},
		{name: "ExpiryPastThirtyDays", in: Settings{Expiry: MaxExpiry + time.Second}, err: "decision links: the expiry must be 1m0s..720h0m0s, not 720h0m1s"},
		{name: "NotAnOrigin", in: Settings{BaseURL: "turncli.example.org"},
			err: `decision links: the base URL "turncli.example.org" is not an http(s) origin such as https://turncli.example.org`},
		{name: "AQuery", in: Settings{BaseURL: "https://t.example.org/?x=1"},
			err: `decision links: the base URL "https://t.example.org/?x=1" is not an http(s) origin such as https://turncli.example.org`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.in
			err := s.Validate()
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Validate: %v; want %s", err, tc.err)
				}
				return
			}
			if err != nil || s != tc.want {
				t.Fatalf("Validate: %+v, %v; want %+v", s, err, tc.want)
			}
		})
	}
}
