// Package e2e tests the chat surfaces end to end: a real primary (in this process, its APIs
// over bufconn) delivering its thread feed to a real chat server on loopback (Dendrite for
// Matrix), and people answering there from their own accounts, or from a browser through
// decision links on the primary's REST listener.
package e2e
