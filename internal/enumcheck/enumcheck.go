// Package enumcheck refuses requests that carry an enum number their proto does not declare.
// Proto3 keeps unknown enum numbers as they came, so without this an origin of 99 would reach
// a handler, whose lookup would quietly treat it as unspecified.
//
// It checks every enum field of a request, at any depth, in one place for every route: REST
// requests reach the same gRPC server through the gateway. It does not check streams a client
// sends on (workers and tool hosts), whose peers are processes of the system itself.
package enumcheck

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Check returns INVALID_ARGUMENT naming the first enum field of m set to an undeclared number.
func Check(m proto.Message) error {
	if m == nil {
		return nil
	}
	if name, ok := firstUnknown(m.ProtoReflect()); !ok {
		return status.Errorf(codes.InvalidArgument, "%s is not one of its declared values", name)
	}
	return nil
}

// firstUnknown walks the set fields of m; ok is false with the field's name at the first
// undeclared enum number.
func firstUnknown(m protoreflect.Message) (name string, ok bool) {
	ok = true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if name, ok = value(fd, l.Get(i)); !ok {
					return false
				}
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				name, ok = value(fd.MapValue(), mv)
				return ok
			})
		default:
			name, ok = value(fd, v)
		}
		return ok
	})
	return name, ok
}

func value(fd protoreflect.FieldDescriptor, v protoreflect.Value) (string, bool) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return string(fd.Name()), false
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if name, ok := firstUnknown(v.Message()); !ok {
			return string(fd.Name()) + "." + name, false
		}
	}
	return "", true
}

// UnaryInterceptor checks every unary request.
func UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if m, ok := req.(proto.Message); ok {
			if err := Check(m); err != nil {
				return nil, err
			}
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor checks the request of every server-streaming call.
func StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.IsClientStream {
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
		return Check(pm)
	}
	return nil
}
