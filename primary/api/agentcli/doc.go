// Package agentcli serves AgentCLIService: it authenticates each request (the grant, on the
// path the request arrived by), reads its operation strictly and hands it to the caller's
// Response. errors.go maps domain errors to gRPC codes, once; the HTTP edge in
// internal/agentclihttp maps those codes to HTTP statuses, once.
//
// The handlers authenticate even though the HTTP edge already did before reading the body: a
// grant can be revoked between the two, and the sandbox proxy's calls arrive over gRPC.
//
// It does not decide what a grant may do beyond "this response, on this path": windows,
// limits and fences belong to the response package.
//
// It is one of the primary's API adapters (docs/ARCHITECTURE.md): only package primary imports it.
package agentcli
