// Package mcpbridge mounts MCP servers as deferred toolkits of the primary's catalog, using the
// official Go SDK as the client. A mounted server's tools/list (followed page by page to its
// last cursor) becomes the toolkit's functions, loaded on the first describe or call. A tool the
// catalog's rules refuse (catalog.CheckFunction: a name that is not printable, a schema too
// deep, too large or that does not compile) or whose name an earlier tool has is left out
// alone, with a warning naming the server, the tool (escaped) and the reason, and counted by
// reason (Skipped); only a server that cannot be started, initialised or listed fails. A call is
// one tools/call, and its result becomes the receipt's outcome: structuredContent when present,
// else the content (one text block as a string, several blocks as a list), with images and
// audio as data: URI attachments, and isError as a failed call carrying the tool's text. A
// server of either MCP era is mounted: the client asks server/discover first (2026-07-28,
// stateless requests) and, when the server refuses it, falls back to the initialize handshake
// (2025-11-25 and before), so servers of both eras sit in one catalog.
//
// What it owns, per mounted server:
//
//   - The connection: a stdio subprocess (command, args, working directory, and an environment
//     built only from an allowlist of the primary's variables plus fixed values, never the
//     primary's whole environment) or a streamable HTTP session with a loopback URL.
//   - The subprocess: it runs as the leader of its own process group; stopping it closes its
//     stdin, then signals the group (SIGTERM, then SIGKILL), and whatever is left of the group
//     is killed once the leader exits.
//   - Recovery: a server that exits or whose connection breaks is started again on its next use,
//     not before; consecutive failures back off exponentially so a crash loop cannot spin. Calls
//     in flight on a dying server fail with an outcome saying so. After a call or load times
//     out the server is pinged: one that does not answer is wedged as a whole, not just in that
//     call, and is stopped, to be started again on its next use.
//   - Bounds: every load and call has a timeout (load 30 s, call 60 s by default), and Close
//     stops the server and joins every goroutine and process the toolkit started. A call's
//     deadline is its own, the earlier of its caller's and the call timeout: a call that
//     passes it fails alone (fault.DeadlineExceeded), the server is sent
//     notifications/cancelled for it, and the session goes on serving other calls.
//
// What it does not own: the catalog (the registry decides when to load and validates arguments
// against the schemas this package reports), receipts, windows and dispatch, and the decision of
// which servers to mount (the primary's configuration). It does not follow a server's
// tools/list_changed notifications: the tool list is read once per primary, on first use.
package mcpbridge
