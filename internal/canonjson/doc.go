// Package canonjson reads JSON strictly and writes it canonically, as the Agent CLI contract
// requires on both sides of the wire.
//
// Strict reading (Parse) accepts exactly one JSON value encoded as UTF-8 without a byte order
// mark, and refuses duplicate object keys at any depth, NaN and Infinity literals, numbers that
// overflow float64, nesting deeper than MaxDepth, invalid UTF-8 and trailing data. Numbers are
// kept as Number, the literal text, so an integer stays an integer and 1 and 1.0 stay distinct.
//
// Canonical writing (Marshal, Append) sorts object keys by code point, emits no insignificant
// whitespace, writes UTF-8 raw (no \u escaping of non-ASCII, no HTML escaping), writes integers
// as integers and floats in their shortest round-trip form, and is deterministic for every value.
// For any text Parse accepts, Canonicalize writes byte for byte what the MindRoom server's
// Python writes with json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"),
// ensure_ascii=False): floats follow repr(float), so 1.0 stays "1.0", 1E2 becomes "100.0",
// 1e16 becomes "1e+16" and 0.00001 becomes "1e-05".
//
// The package uses only the standard library, so the stdlib-only client may import it.
package canonjson
