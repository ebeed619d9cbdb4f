package memory

import "encoding/json"

// The SQL drivers store a byte or JSON value in a column; these copy one on the way in and
// out, so that no caller shares memory with the store, and return what the column reads back.

// blob is a BLOB column that is NULL when empty: nil for no bytes, else a copy.
func blob(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// text is a NOT NULL JSON text column: a copy, never nil.
func text(raw json.RawMessage) json.RawMessage { return append(json.RawMessage{}, raw...) }

// nullText is a JSON text column that may be NULL: nil stays nil, else a copy.
func nullText(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return text(raw)
}
