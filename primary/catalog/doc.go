// Package catalog owns the tools a response can discover and call: the registry of toolkits
// (eager, or deferred and loaded once on first describe or call), a response's snapshot of it
// (View), and discovery over that snapshot (paginated list, search, describe), plus validation
// of call arguments against each function's JSON Schema. A View may hide functions from its
// response: those an Advertiser toolkit does not offer to it and, in the standard shell mode,
// those with traits (View.Standard).
//
// It does not own receipts, windows or dispatch: a response asks its View to resolve a function
// and then calls the toolkit itself. Listing and searching never load a deferred toolkit.
//
// docs/ARCHITECTURE.md maps the packages and says which owns each term of the glossary.
package catalog
