// Package primary assembles the mindroom-primary process: it locks its state directory (Run),
// builds the catalog, the response manager, local shells and the API servers in dependency
// order (New), each registering its stop as it is built, serves them on the listeners it is
// given, writes endpoints.json, and when its context ends runs the stops by phase, in reverse
// construction order (package lifecycle).
//
// The behaviour lives in the subpackages; this package is wiring and lifecycle only. Each
// component's configuration is a section of Config owned by the component's package.
//
// docs/ARCHITECTURE.md draws the processes and packages, the rule between engines and
// adapters (primary/deps_test.go keeps it), the assembly and its lifecycle, the life of a call
// and a glossary.
package primary
