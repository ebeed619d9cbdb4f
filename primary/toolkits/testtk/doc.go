// Package testtk provides the deterministic built-in toolkits used by tests and demos: "test"
// (eager) and "test_deferred" (deferred, counting its loads). Their functions echo, sleep, fail,
// produce large or media results, report waiting, block on named gates that a test or a release
// call opens, offer a schema too large to describe inline, return the identity a call runs
// under, and echo only once a person confirmed the call (counting its runs in a marker file),
// so every path of discovery, dispatch and receipts can be driven without real tools or timing
// guesses.
//
// It owns only these toolkits and their gates. It does not register itself: the primary adds it
// to a registry only when a flag enables it, and the registry, not this package, validates
// arguments against the schemas declared here.
package testtk
