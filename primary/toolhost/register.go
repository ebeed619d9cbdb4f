package toolhost

import (
	"context"
	"fmt"

	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/primary/catalog"
)

// register handles one RegisterToolkit of c: a new toolkit joins the registry; a known one whose
// host is gone or draining is taken over (its loaded definition forgotten); one a live host
// serves, or a built-in one, is refused.
func (s *Service) register(c *conn, req *toolhostv1.RegisterToolkit) *toolhostv1.ToolkitRegistered {
	name := req.GetName()
	reject := func(reason toolhostv1.RejectionReason, format string, args ...any) *toolhostv1.ToolkitRegistered {
		msg := fmt.Sprintf(format, args...)
		c.log.Warn("toolkit registration refused", "toolkit", name, "reason", reason.String(), "detail", msg)
		return &toolhostv1.ToolkitRegistered{Name: name, Rejection: &toolhostv1.Rejection{Reason: reason, Message: msg}}
	}
	const invalid = toolhostv1.RejectionReason_REJECTION_REASON_INVALID

	s.regMu.Lock()
	defer s.regMu.Unlock()
	if c.isDraining() {
		return reject(invalid, "tool host %q is draining; it cannot register toolkits", c.hostID)
	}
	reg, err := validate(c.ctx, req)
	if err != nil {
		return reject(invalid, "%v", err)
	}

	s.mu.Lock()
	t := s.toolkits[name]
	total := len(s.toolkits)
	s.mu.Unlock()
	if t == nil && total >= MaxHostedToolkits {
		return reject(invalid, "the primary already serves %d toolkits from tool hosts, the most it takes", MaxHostedToolkits)
	}
	if t == nil {
		if _, builtin := s.cfg.Registry.Lookup(name); builtin {
			return reject(toolhostv1.RejectionReason_REJECTION_REASON_RESERVED, "toolkit %q is built into the primary and cannot be served by a tool host", name)
		}
		t = &hostedToolkit{name: name, description: reg.description}
		t.setRegistration(reg)
		if err := s.cfg.Registry.Register(c.ctx, t); err != nil {
			return reject(invalid, "%v", err)
		}
		t.entry, _ = s.cfg.Registry.Lookup(name)
		s.mu.Lock()
		s.toolkits[name] = t
		s.mu.Unlock()
	} else {
		switch holder := t.holder(); {
		case holder == c:
			return reject(toolhostv1.RejectionReason_REJECTION_REASON_NAME_TAKEN, "toolkit %q is already registered on this stream", name)
		case holder != nil:
			return reject(toolhostv1.RejectionReason_REJECTION_REASON_NAME_TAKEN, "toolkit %q is already served by tool host %q", name, holder.hostID)
		}
		t.setRegistration(reg)
		// Forget the previous host's definition; an eager one is compiled again now (it was
		// validated above, so this cannot fail on the definition).
		if err := t.entry.Reload(c.ctx); err != nil {
			return reject(invalid, "%v", err)
		}
	}
	if !t.attach(c) {
		return reject(invalid, "the stream of tool host %q has ended", c.hostID)
	}
	c.log.Info("toolkit registered", "toolkit", name, "deferred", reg.deferred)
	return &toolhostv1.ToolkitRegistered{Name: name}
}

// MaxHostedToolkits bounds the distinct toolkit names tool hosts may register over the primary's
// life: a name stays in the catalog (unavailable) after its host leaves, so it is never freed.
const MaxHostedToolkits = 1024

// validate checks a registration the way the registry will, in a scratch registry, so a
// broken definition never replaces a working one.
func validate(ctx context.Context, req *toolhostv1.RegisterToolkit) (registration, error) {
	reg := registration{name: req.GetName(), description: req.GetDescription(), deferred: req.GetDeferred()}
	switch {
	case reg.deferred && req.GetDefinition() != nil:
		return reg, fmt.Errorf("deferred toolkit %q must not send its definition before it is loaded", reg.name)
	case !reg.deferred && req.GetDefinition() == nil:
		return reg, fmt.Errorf("toolkit %q needs its definition (or deferred set)", reg.name)
	case !reg.deferred:
		reg.def = definitionFromProto(req.GetDefinition())
	}
	if err := catalog.NewRegistry().Register(ctx, staticToolkit{name: reg.name, deferred: reg.deferred, def: reg.def}); err != nil {
		return reg, err
	}
	return reg, nil
}
