package client

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// newCallID returns a random version 4 UUID read from rnd, lower-case and hyphenated.
func newCallID(rnd io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("read random call id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(b), nil
}

func formatUUID(b [16]byte) string {
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// parseUUID accepts the spellings servers accept (hyphenated or 32 hex digits, any case,
// optionally in braces or after "urn:uuid:") and returns the canonical lower-case hyphenated
// form.
func parseUUID(s string) (string, bool) {
	if len(s) >= 9 && strings.EqualFold(s[:9], "urn:uuid:") {
		s = s[9:]
	} else if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	switch len(s) {
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		s = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	case 32:
	default:
		return "", false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		return "", false
	}
	return formatUUID(b), true
}
