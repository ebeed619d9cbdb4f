// Package toolhost is the primary's side of ToolHostService: it keeps one connection per tool
// host, turns every toolkit a host registers into a catalog.Toolkit in the primary's registry,
// forwards loads of deferred toolkits and calls to the host serving each toolkit now, relays the
// host's progress, results and attachments, tells the host when a call is cancelled, and fails
// calls clearly when that host goes away. A toolkit stays in the catalog for the life of the
// primary; the next host to register its name takes it over.
//
// It does not authenticate hosts (roleauth admits the runtime credential before Connect runs),
// does not validate arguments (the catalog does, before a call reaches any toolkit), owns no
// receipts, and contains no host-side code (package hostkit is the Go SDK for hosts). The
// protocol itself is documented in proto/turncli/toolhost/v1/toolhost.proto.
//
// It is one of the two stream engines of docs/ARCHITECTURE.md: ToolHostService's stream is
// its state, so it reads the tool-host protocol itself.
package toolhost
