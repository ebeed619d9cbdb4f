// Package primary assembles the mindroom-primary process: it builds the catalog, the response
// manager, local shells and the API servers in dependency order, serves them on the listeners
// it is given, writes endpoints.json, and shuts them down in order when its context ends.
//
// The behaviour lives in the subpackages; this package is wiring and lifecycle only.
package primary
