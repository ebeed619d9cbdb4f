// Package workermeta names the gRPC metadata a worker sends on every call to the primary (its
// Connect stream, CheckGrant and the Agent CLI calls its sandbox proxy forwards), so the side
// that sends them (sandboxproxy) and the side that checks them (primary/workerhub) cannot
// drift apart.
package workermeta

const (
	// CredentialKey carries the worker key's credential.
	CredentialKey = "turncli-worker-credential"
	// IDKey carries the worker's id, which its Hello repeats.
	IDKey = "turncli-worker-id"
)
