// Package primary assembles the mindroom-primary process: it locks its state directory (Run),
// builds the catalog, the response manager, local shells and the API servers in dependency
// order, serves them on the listeners it is given, writes endpoints.json, and shuts them down
// in order when its context ends.
//
// The behaviour lives in the subpackages; this package is wiring and lifecycle only.
//
// docs/ARCHITECTURE.md draws the processes and packages, the rule between engines and
// adapters (primary/deps_test.go keeps it), the life of a call and a glossary.
package primary
