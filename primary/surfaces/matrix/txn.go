package matrix

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// TxnID is the transaction id of one send: the same (item key, part, version) always gives
// the same id, so a send retried against the same homeserver run with the same access token
// is the event already posted. Part names what is sent ("card", "close", "report/3", …).
// It is a hash, so an item key with "/" or any other character is safe in the request path.
func TxnID(key, part string, version int) string {
	h := sha256.New()
	for _, s := range []string{key, part, strconv.Itoa(version)} {
		h.Write([]byte(strconv.Itoa(len(s)))) // length-prefixed: ("a/b","c") ≠ ("a","b/c")
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return "turncli." + hex.EncodeToString(h.Sum(nil))[:32]
}
