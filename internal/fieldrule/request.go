package fieldrule

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fields are the request fields, by proto name, that the rules apply to, wherever they are
// (a nested conversation's channel too). A name means one thing in every request.
var fields = map[protoreflect.Name]Kind{
	"response_id":  ResponseID,
	"call_id":      CallID,
	"bash_call_id": BashCallID,
	"channel":      Channel,
	"thread":       Thread,
	"requester_id": Requester,
	"requester":    Requester,
	"worker_key":   WorkerKey,
	"agent_name":   AgentName,
	"actor":        OperatorName,
	"flags":        Flag,
	"surface":      Surface,
	"chat_user_id": ChatUserID,
	"person":       Person,
}

// FieldKind returns the kind a request field of that proto name has; ok is false for a field
// no rule applies to.
func FieldKind(name string) (k Kind, ok bool) {
	k, ok = fields[protoreflect.Name(name)]
	return k, ok
}

// CheckRequest checks every set field of m that a rule applies to, at any depth, and returns
// the first refusal (a fault.InvalidArgument naming the field's path).
func CheckRequest(m proto.Message) error {
	if m == nil {
		return nil
	}
	return checkMessage(m.ProtoReflect(), "")
}

func checkMessage(m protoreflect.Message, prefix string) (err error) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		path := prefix + string(fd.Name())
		switch {
		case fd.IsMap():
			return true // no rule applies to a map's entries
		case fd.Kind() == protoreflect.MessageKind:
			if fd.IsList() {
				for i := range v.List().Len() {
					if err = checkMessage(v.List().Get(i).Message(), path+"."); err != nil {
						return false
					}
				}
				return true
			}
			err = checkMessage(v.Message(), path+".")
		case fd.Kind() == protoreflect.StringKind:
			k, ok := fields[fd.Name()]
			if !ok {
				return true
			}
			if fd.IsList() { // every element is checked, an empty one too
				for i := range v.List().Len() {
					if err = Check(k, path, v.List().Get(i).String()); err != nil {
						return false
					}
				}
				return true
			}
			err = Check(k, path, v.String()) // Range visits only set fields: never empty
		}
		return err == nil
	})
	return err
}

// exempt reports whether a method's requests are left to the service itself: the Agent CLI
// answers malformed ids by its own contract (401 or 422, fixed bodies), applying the same
// rules.
func exempt(method string) bool {
	return strings.HasPrefix(method, "/turncli.agentcli.v1.AgentCLIService/")
}

// UnaryInterceptor checks every unary request.
func UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if m, ok := req.(proto.Message); ok && !exempt(info.FullMethod) {
			if err := CheckRequest(m); err != nil {
				return nil, err
			}
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor checks the request of every server-streaming call. Streams a client
// sends on (workers and tool hosts) are not checked: their peers are processes of the system
// itself, and their services check what they take.
func StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.IsClientStream || exempt(info.FullMethod) {
			return handler(srv, ss)
		}
		return handler(srv, checkedStream{ss})
	}
}

type checkedStream struct{ grpc.ServerStream }

func (s checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if pm, ok := m.(proto.Message); ok {
		return CheckRequest(pm)
	}
	return nil
}
