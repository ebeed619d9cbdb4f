// Package pagetoken is the one page-token codec of the operator lists: it turns the position
// of a page's last record into an opaque token and back, bound to the list and the filters
// the page was read with. It owns the token's format and its checks; each list owns what its
// position is (an id, a time and a key) and its filters.
//
// A token is base64url (no padding) of: a version byte, a 12-byte check, and the position's
// fields, each a uvarint length and its bytes. The check is SHA-256 over the version, the
// list's name, its filter values and the fields, cut to 12 bytes. Decoding recomputes it with
// the list and filters of the request at hand, so a token of another list or other filters
// is refused, as is a token edited by hand or cut short. The check has no key: a token is not
// a credential, and a forged position only chooses where a page of records the caller may
// read anyway starts. Tokens stay good across restarts and between primaries.
package pagetoken

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/turncli/turncli/internal/fault"
)

// version is the format of the tokens Encode makes; Decode accepts only it.
const version byte = 1

const (
	checkLen = 12
	// MaxLen bounds a token, in characters: a longer one is refused before it is decoded.
	MaxLen = 1024
	// maxFields bounds a position's fields.
	maxFields = 8
)

// A Position is the place of a page's last record in its list's order: its ordering fields,
// in order (for example its id, or its time and its key).
type Position []string

// The errors of Decode; both are fault.InvalidArgument.
var (
	// ErrMalformed: the token is not one this codec made (or it was edited or cut short).
	ErrMalformed = fault.New(fault.InvalidArgument, "page_token is not a page token this API returned; start again without it")
	// ErrOtherList: the token was made by another list, or with other filters.
	ErrOtherList = fault.New(fault.InvalidArgument, "page_token belongs to another list or to other filters; pass it back with the filters that returned it, or start again without it")
)

// Encode returns the token of the page after pos in the list named list, read with the
// filter values filter (in an order the list fixes).
func Encode(list string, filter []string, pos Position) string {
	body := appendFields(nil, pos)
	raw := make([]byte, 0, 1+checkLen+len(body))
	raw = append(raw, version)
	raw = append(raw, check(list, filter, body)...)
	raw = append(raw, body...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// Decode returns the position token names: nil for "" (the first page). The token must have
// been made by Encode with the same list and filter, and hold exactly fields fields; else the
// error is ErrMalformed or ErrOtherList.
func Decode(token, list string, filter []string, fields int) (Position, error) {
	if token == "" {
		return nil, nil
	}
	if len(token) > MaxLen {
		return nil, ErrMalformed
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+checkLen || raw[0] != version {
		return nil, ErrMalformed
	}
	sum, body := raw[1:1+checkLen], raw[1+checkLen:]
	pos, ok := parseFields(body)
	if !ok || len(pos) != fields {
		return nil, ErrMalformed
	}
	if !bytes.Equal(sum, check(list, filter, body)) {
		return nil, ErrOtherList
	}
	return pos, nil
}

// check binds the encoded position to the list and the filter.
func check(list string, filter []string, body []byte) []byte {
	h := sha256.New()
	b := append([]byte("turncli page token"), version)
	b = appendFields(b, Position{list})
	b = binary.AppendUvarint(b, uint64(len(filter)))
	b = appendFields(b, filter)
	h.Write(b)
	h.Write(body)
	return h.Sum(nil)[:checkLen]
}

func appendFields(b []byte, fields []string) []byte {
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

func parseFields(b []byte) (Position, bool) {
	var out Position
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) || len(out) == maxFields {
			return nil, false
		}
		out = append(out, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	return out, true
}
