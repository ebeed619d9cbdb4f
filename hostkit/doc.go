// Package hostkit is the Go SDK for tool hosts: programs that serve toolkits to a turncli
// primary over ToolHostService. A host dials the primary with the runtime credential, registers
// its toolkits, answers describe and call requests, reconnects with backoff when the connection
// drops, and drains gracefully when its context ends.
//
// Functions are typed Go functions; the input JSON Schema is derived from the input struct:
//
//	type AddInput struct {
//		A int `json:"a" description:"First addend."`
//		B int `json:"b" description:"Second addend."`
//	}
//	type AddOutput struct {
//		Sum int `json:"sum"`
//	}
//	add := hostkit.Func("add", "Adds two numbers", func(ctx context.Context, c hostkit.Call, in AddInput) (AddOutput, error) {
//		return AddOutput{Sum: in.A + in.B}, nil
//	})
//	host, err := hostkit.New(hostkit.Config{Address: "127.0.0.1:7420", Token: token},
//		hostkit.Toolkit{Name: "math", Description: "Arithmetic", Functions: []hostkit.Function{add}})
//	...
//	err = host.Run(ctx) // until ctx ends
//
// The primary validates arguments against the schema before a call reaches the host, and takes
// the caller's identity (Call.Identity) from the response, never from the arguments.
//
// Each call runs in a span that continues the trace of the command that made it (see
// Config.TracerProvider); a handler passes its context on to carry the trace further.
//
// A function that waits for a person, starts work that outlives the calling command, or after
// which the agent should end its turn says so with WithTraits; responses in the primary's
// standard shell mode do not offer it.
//
// It owns the host side of the protocol only; the primary's side is package primary/toolhost,
// and the protocol is documented in proto/turncli/toolhost/v1/toolhost.proto. It uses only the
// standard library, gRPC, protobuf and OpenTelemetry.
package hostkit
