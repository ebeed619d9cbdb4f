package client

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
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

// newTimedCallID returns a version 7 UUID (RFC 9562): now in Unix milliseconds in its first
// 48 bits, then 74 bits read from rnd. The id says when it was made, so whoever holds only the
// id can tell that time without anything stored beside it; 74 random bits keep it
// unguessable.
func newTimedCallID(rnd io.Reader, now time.Time) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[6:]); err != nil {
		return "", fmt.Errorf("read random call id: %w", err)
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[0:6], ms[2:8])
	b[6] = b[6]&0x0f | 0x70 // version 7
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(b), nil
}

// timedCallIDTime returns the time a version 7 UUID in canonical form (lower-case,
// hyphenated) carries; ok is false for anything else.
func timedCallIDTime(id string) (t time.Time, ok bool) {
	canonical, valid := parseUUID(id)
	if !valid || canonical != id || id[14] != '7' || !strings.ContainsRune("89ab", rune(id[19])) {
		return time.Time{}, false
	}
	var ms [8]byte
	if _, err := hex.Decode(ms[2:], []byte(id[0:8]+id[9:13])); err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(ms[:]))).UTC(), true
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
