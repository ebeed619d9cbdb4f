package shellpriv

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// User is the unprivileged user and group shells run as. Supplementary groups are always empty.
type User struct {
	Uid, Gid uint32
	// Name is the user's login name, empty when the system does not name the uid.
	Name string
}

func (u *User) String() string { return fmt.Sprintf("%d:%d", u.Uid, u.Gid) }

// nobody is the fallback shell user when the system names neither nobody nor nogroup.
const nobody = 65534

// Parse reads NAME, UID, NAME:GROUP or UID:GID. A user given without a group runs with the
// user's primary group. Uid 0 is refused: a shell running as root could read the state.
func Parse(spec string) (*User, error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	if name == "" || (hasGroup && group == "") {
		return nil, fmt.Errorf("shell user %q: use NAME, UID, NAME:GROUP or UID:GID", spec)
	}
	u := &User{}
	primaryGid := ""
	if id, err := strconv.ParseUint(name, 10, 32); err == nil {
		u.Uid = uint32(id)
		if pw, err := user.LookupId(name); err == nil {
			primaryGid = pw.Gid
		}
	} else {
		pw, err := user.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("shell user %q: %w", name, err)
		}
		id, err := strconv.ParseUint(pw.Uid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("shell user %q: uid %q", name, pw.Uid)
		}
		u.Uid, primaryGid = uint32(id), pw.Gid
	}
	if !hasGroup {
		if primaryGid == "" {
			return nil, fmt.Errorf("shell user %q: no such user to take a group from; give UID:GID", spec)
		}
		group = primaryGid
	}
	gid, err := parseGroup(group)
	if err != nil {
		return nil, fmt.Errorf("shell user %q: %w", spec, err)
	}
	u.Gid = gid
	if u.Uid == 0 {
		return nil, fmt.Errorf("shell user %q is root: shells would reach the state directory's credentials", spec)
	}
	u.Name = nameOf(u.Uid)
	return u, nil
}

func parseGroup(group string) (uint32, error) {
	if id, err := strconv.ParseUint(group, 10, 32); err == nil {
		return uint32(id), nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("group %q: gid %q", group, g.Gid)
	}
	return uint32(id), nil
}

// Default is the shell user when none is configured: nil (no switch) when this process is not
// root; otherwise the user nobody with the group nogroup (or nobody), each 65534 when the
// system does not name it.
func Default() *User {
	if os.Geteuid() != 0 {
		return nil
	}
	u := &User{Uid: nobody, Gid: nobody}
	if pw, err := user.Lookup("nobody"); err == nil {
		if id, err := strconv.ParseUint(pw.Uid, 10, 32); err == nil && id != 0 {
			u.Uid = uint32(id)
		}
	}
	for _, name := range []string{"nogroup", "nobody"} {
		if gid, err := parseGroup(name); err == nil && gid != 0 {
			u.Gid = gid
			break
		}
	}
	u.Name = nameOf(u.Uid)
	return u
}

// nameOf is the login name of uid, or empty.
func nameOf(uid uint32) string {
	if pw, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return pw.Username
	}
	return ""
}

// ErrNotRoot reports a shell user configured for a process that cannot switch to it.
var ErrNotRoot = errors.New("switching shells to another user needs the primary or worker to run as root")

// Usable is u as this process can switch shells to it: nil when it is not root (already that
// user: setgroups would fail without root), ErrNotRoot when u is another user.
func Usable(u *User) (*User, error) {
	if u != nil && os.Geteuid() != 0 && (int(u.Uid) != os.Getuid() || int(u.Gid) != os.Getgid()) {
		return nil, ErrNotRoot
	}
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return u, nil
}
