// Package authlimit bounds how often one remote address may present a credential that is
// refused. The dashboard's sign-in, the REST edge and the gRPC authenticators count each refusal
// against the caller's address and, past the limit, answer "too many" (HTTP 429 with
// Retry-After, RESOURCE_EXHAUSTED with a retry delay) instead of "unauthenticated".
//
// Nothing here ever refuses a valid credential: callers check the credential first (a digest
// compare, cheap) and count only refusals, so an attacker sharing an address with an operator
// (the same loopback, the same proxy) cannot lock the operator out. Credentials are 256 random
// bits, so the limit does not stop guessing; it bounds the work and the log lines a flood of
// refusals costs. A limited address is logged once per window, not once per refusal.
//
// It keeps one token bucket per address (an IPv6 address by its /64, which one host usually
// holds) in a table of bounded size: idle entries are dropped, and while the table is full of
// busy ones every new address shares one overflow bucket, so a flood of addresses cannot grow
// memory. It decides nothing about which credential is valid.
package authlimit
