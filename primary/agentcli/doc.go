// Package agentcli serves the Agent CLI: the gRPC AgentCLIService that authenticates each
// request, reads its operation strictly and hands it to the caller's Response, and the HTTP
// front that serves the contract's two REST routes through grpc-gateway.
//
// The HTTP front checks the grant before reading the body and caps the body at 64 KiB, so a
// request without authority is refused whatever it carries; the gRPC handlers check again,
// because they are also reached without the HTTP front (the sandbox proxy's forwarded calls).
// Status codes are chosen in one place per layer: errors.go maps domain errors to gRPC codes
// and http.go maps gRPC codes to HTTP statuses.
//
// It does not decide what a grant may do beyond "this response, on this path": windows,
// limits and fences belong to the response package.
package agentcli
