package interaction

import (
	"context"
	"fmt"
	"slices"

	"github.com/turncli/turncli/primary/catalog"
	"github.com/turncli/turncli/primary/response"
	"github.com/turncli/turncli/primary/store"
)

// tier is what the conversation's mode lets a caller do with a background command.
type tier int

const (
	tierRefused  tier = iota // not allowed here
	tierApproval             // saved for an admin to approve
	tierDirect               // starts at once
)

// tierFor applies the mode gates. In an admin conversation only a foreground turn of an admin
// author whom the runtime vouches for (the requester_trusted flag) starts a command at once: a
// person asked for it just now. A requester id is only a name the runtime passed along, so an
// admin's name without that flag could be anyone's; such a turn, and every other origin of an
// admin's turn (a background agent, a scheduled task, a recovery, the runtime's own API), takes
// the auto tier, a durable approval, because nobody stands behind that request at the moment.
func (s *Background) tierFor(ctx context.Context, id catalog.Identity) (tier, string, error) {
	setting, err := s.cfg.Store.ConversationMode(ctx, id.Channel, id.Thread)
	if err != nil {
		return tierRefused, "", err
	}
	switch setting.Mode {
	case store.ModeAuto:
		return tierApproval, "", nil
	case store.ModeAdmin:
		admin, err := s.isAdmin(ctx, id.Requester)
		switch {
		case err != nil:
			return tierRefused, "", err
		case !admin:
			return tierRefused, fmt.Sprintf("This conversation is in admin mode, where background commands start at once only for admins, and %q is not an admin. "+
				"Two ways to run it: an admin asks for it in this conversation, or an admin sets the conversation's mode to auto, "+
				"so each command waits for an admin's approval.", id.Requester), nil
		case !vouchedForeground(id):
			return tierApproval, "", nil
		default:
			return tierDirect, "", nil
		}
	default:
		return tierRefused, "Background commands are not enabled in this conversation (its mode is ask). " +
			"An admin can enable them in two ways: set the conversation's mode to auto, so each command waits for an admin's approval, " +
			"or to admin, so commands from admins start at once.", nil
	}
}

// vouchedForeground reports whether a person asked for this turn just now and the runtime vouches
// that the requester is that person: a foreground turn with the requester_trusted flag. What
// acts at once on a person's word (an admin's command, a form only the requester answers) needs
// both.
func vouchedForeground(id catalog.Identity) bool {
	return id.Origin == response.OriginForeground && slices.Contains(id.Flags, response.FlagRequesterTrusted)
}

// isAdmin reports whether the person is an operator with the admin role (a requester is
// matched to operators by name).
func (s *Background) isAdmin(ctx context.Context, person string) (bool, error) {
	if person == "" {
		return false, nil
	}
	ops, err := s.cfg.Store.ListOperators(ctx)
	if err != nil {
		return false, err
	}
	for _, op := range ops {
		if op.Name == person {
			return op.Role == store.RoleAdmin, nil
		}
	}
	return false, nil
}

// place is where a response's background jobs run.
type place struct {
	workerKey string // empty: the primary's host
	// dir is a local job's working directory.
	dir string
	// workdir names the place in approvals: host and directory.
	workdir string
}

func (s *Background) placeOf(agent, workerKey string) (place, error) {
	if workerKey != "" {
		return place{workerKey: workerKey, workdir: "worker key " + workerKey + ": workspaces/" + agent}, nil
	}
	dir, err := s.cfg.Shells.Workspace(agent)
	if err != nil {
		return place{}, err
	}
	return place{dir: dir, workdir: "primary: " + dir}, nil
}
