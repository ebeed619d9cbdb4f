package secrets

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RedactMessage redacts the live secrets from every string field of m, at any depth (lists
// and map values too), in place. Bytes fields are left alone: their owner masks them (a job
// log read keeps its length).
func (r *Registry) RedactMessage(m proto.Message) {
	if m != nil {
		r.redactMessage(m.ProtoReflect())
	}
}

func (r *Registry) redactMessage(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				switch fd.Kind() {
				case protoreflect.StringKind:
					l.Set(i, protoreflect.ValueOfString(r.Redact(l.Get(i).String())))
				case protoreflect.MessageKind, protoreflect.GroupKind:
					r.redactMessage(l.Get(i).Message())
				}
			}
		case fd.IsMap():
			mv, vd := v.Map(), fd.MapValue()
			mv.Range(func(k protoreflect.MapKey, x protoreflect.Value) bool {
				switch vd.Kind() {
				case protoreflect.StringKind:
					mv.Set(k, protoreflect.ValueOfString(r.Redact(x.String())))
				case protoreflect.MessageKind, protoreflect.GroupKind:
					r.redactMessage(x.Message())
				}
				return true
			})
		case fd.Kind() == protoreflect.StringKind:
			if s := v.String(); r.Redact(s) != s {
				m.Set(fd, protoreflect.ValueOfString(r.Redact(s)))
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			r.redactMessage(v.Message())
		}
		return true
	})
}

// UnaryServerInterceptor redacts the responses of the services named (full gRPC service
// names, such as "turncli.operator.v1.OperatorService"): what people read through them quotes
// texts agents, tools and jobs wrote. Other services pass untouched; the runtime's own API
// must return the grants it opens.
func (r *Registry) UnaryServerInterceptor(services ...string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if m, ok := resp.(proto.Message); ok && err == nil && inServices(info.FullMethod, services) {
			r.RedactMessage(m)
		}
		return resp, err
	}
}

// StreamServerInterceptor redacts every message the services named send on a stream.
func (r *Registry) StreamServerInterceptor(services ...string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if inServices(info.FullMethod, services) {
			ss = &redactingStream{ServerStream: ss, live: r}
		}
		return h(srv, ss)
	}
}

type redactingStream struct {
	grpc.ServerStream
	live *Registry
}

func (s *redactingStream) SendMsg(m any) error {
	if pm, ok := m.(proto.Message); ok {
		s.live.RedactMessage(pm)
	}
	return s.ServerStream.SendMsg(m)
}

func inServices(fullMethod string, services []string) bool {
	service, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	for _, s := range services {
		if s == service {
			return true
		}
	}
	return false
}
