package secrets_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

func token() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func TestTokenShaped(t *testing.T) {
	for range 100 {
		if tok := token(); !secrets.TokenShaped(tok) {
			t.Fatalf("TokenShaped(%q) = false for a minted token", tok)
		}
	}
	tok := token()
	for _, s := range []string{tok[:42], tok + "A", tok[:42] + "B", tok[:10] + "+" + tok[11:], ""} {
		if secrets.TokenShaped(s) {
			t.Errorf("TokenShaped(%q) = true", s)
		}
	}
}

func TestRedact(t *testing.T) {
	r := secrets.New()
	grant, operator, configured := token(), token(), "configured-runtime-secret"
	r.Add(grant)
	d := sha256.Sum256([]byte(operator))
	r.AddDigest(d)
	r.Add(configured)
	r.Add("short") // under MinLength: ignored
	dead := token()

	for _, tc := range []struct{ name, in, want string }{
		{"AloneOnALine", grant + "\n", "(redacted)\n"},
		{"KnownOnlyByDigest", "Authorization: Bearer " + operator, "Authorization: Bearer (redacted)"},
		{"AfterAnEqualsSign", "MINDROOM_AGENT_CLI_TOKEN=" + grant + " next", "MINDROOM_AGENT_CLI_TOKEN=(redacted) next"},
		{"GluedToOtherBase64urlText", "xx_" + grant + "-yy", "xx_(redacted)-yy"},
		{"TwoTokensGlued", grant + operator, "(redacted)(redacted)"},
		{"OtherShapeInClear", "key=configured-runtime-secret;", "key=(redacted);"},
		{"DeadTokenStays", "old " + dead, "old " + dead},
		{"ShortValueIsNotASecret", "short", "short"},
		{"NoSecret", "plain text", "plain text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}

	t.Run("RemovedSecretIsNoLongerRedacted", func(t *testing.T) {
		r.Remove(grant)
		r.RemoveDigest(d)
		r.Remove(configured)
		in := grant + " " + operator + " " + configured
		if got := r.Redact(in); got != in {
			t.Errorf("Redact after removal = %q, want it unchanged", got)
		}
		if r.Len() != 0 {
			t.Errorf("Len = %d after removing every secret, want 0", r.Len())
		}
	})

	t.Run("ASecretHeldTwiceStaysUntilRemovedTwice", func(t *testing.T) {
		r.Add(grant)
		r.Add(grant)
		r.Remove(grant)
		if got := r.Redact(grant); got != "(redacted)" {
			t.Errorf("Redact after one of two removals = %q, want (redacted)", got)
		}
		r.Remove(grant)
		if got := r.Redact(grant); got != grant {
			t.Errorf("Redact after both removals = %q, want it unchanged", got)
		}
	})
}

func TestMaskKeepsLengthAndOffsets(t *testing.T) {
	r := secrets.New()
	tok := token()
	r.Add(tok)
	r.Add("abcdefgh") // a clear secret shorter than the mark
	in := []byte("a " + tok + " b abcdefgh c")
	want := "a (redacted)" + strings.Repeat("*", secrets.TokenLength-10) + " b (redacte c"
	r.Mask(in)
	if string(in) != want {
		t.Errorf("Mask = %q, want %q", in, want)
	}
}

// TestMaskedReadAcrossCuts reads a text holding secrets in ranges of every size from 1 byte
// up: whatever the ranges cut, the joined reads are the text masked whole, and no read holds
// a fragment of a secret longer than the cut allows.
func TestMaskedReadAcrossCuts(t *testing.T) {
	r := secrets.New()
	a, b := token(), token()
	r.Add(a)
	r.AddDigest(sha256.Sum256([]byte(b)))
	r.Add("a-configured-credential-of-another-shape")
	text := []byte("start " + a + "\nmiddle " + b + b + " and a-configured-credential-of-another-shape end\n")
	whole := bytes.Clone(text)
	r.Mask(whole)
	for limit := 1; limit <= len(text)+1; limit++ {
		var joined []byte
		for off := int64(0); off < int64(len(text)); {
			got, err := r.MaskedRead(bytes.NewReader(text), int64(len(text)), off, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatalf("limit %d: empty read at offset %d of %d", limit, off, len(text))
			}
			joined = append(joined, got...)
			off += int64(len(got))
		}
		if !bytes.Equal(joined, whole) {
			t.Fatalf("limit %d: joined reads = %q, want %q", limit, joined, whole)
		}
	}
	for _, s := range []string{a, b} {
		if bytes.Contains(whole, []byte(s[:12])) {
			t.Errorf("masked text still holds a piece of a secret: %q", whole)
		}
	}
	if got, _ := r.MaskedRead(bytes.NewReader(text), int64(len(text)), int64(len(text)), 10); len(got) != 0 {
		t.Errorf("read at the end = %q, want nothing", got)
	}
}

func TestRedactRangeTakesInSecretsCrossingItsEdges(t *testing.T) {
	r := secrets.New()
	tok := token()
	r.Add(tok)
	text := "0123456789" + tok + "abcdefghij"
	for _, tc := range []struct {
		name     string
		from, to int
		want     string
	}{
		{"Whole", 0, len(text), "0123456789(redacted)abcdefghij"},
		{"StartInsideTheSecret", 30, len(text), "(redacted)abcdefghij"},
		{"EndInsideTheSecret", 0, 20, "0123456789(redacted)"},
		{"OutsideTheSecret", 0, 10, "0123456789"},
		{"Empty", 5, 5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.RedactRange(text, tc.from, tc.to); got != tc.want {
				t.Errorf("RedactRange(%d, %d) = %q, want %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
}
