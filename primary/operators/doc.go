// Package operators owns the credentials of the people who decide: it mints them (32 random
// bytes, base64url, of which the store keeps only the SHA-256 digest), adds operators, creates
// the first admin on a fresh state directory and writes a credential file only its owner can
// read.
//
// It does not authenticate requests or serve OperatorService (package api/operator does), and
// keeps no state of its own: operators are the store's. docs/ARCHITECTURE.md maps the packages.
package operators
