// Package matrixtest starts throwaway Dendrite homeservers for tests of turncli's Matrix
// surface: one server per test, on a free loopback port, with SQLite databases, its key and its
// config in a directory of the test's own, federation off, registration only through the shared
// secret, and rate limiting off. It registers users through the shared-secret admin endpoint and
// hands back mautrix clients logged in as them. A server can be restarted on the same directory
// and address, so a test can show what survives a homeserver restart.
//
// The Dendrite binary is not built here: scripts/dendrite.sh builds and caches it, and
// TURNCLI_DENDRITE names it. Without it tests skip with the reason, unless
// TURNCLI_REQUIRE_DENDRITE=1 (CI), where they fail. The package owns no Matrix surface of
// turncli's; it only makes a real homeserver available.
package matrixtest
