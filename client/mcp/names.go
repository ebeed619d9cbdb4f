package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// MCP tool names (see mcpDescription for the rules as users read them).
//
// Engines accept tool names made of [A-Za-z0-9_-] and, counting their own prefixes, rarely
// more than 64 characters, while catalog selectors are any 1..128 characters. A function is
// therefore named in one of three forms:
//
//   - natural: TOOLKIT__FUNCTION, when both are made of [A-Za-z0-9_-], the toolkit neither
//     contains "__" nor starts or ends with "_", and the name fits. Splitting at the first
//     "__" gives the toolkit back, so natural names never collide and decode without state.
//   - bare: FUNCTION for the interaction toolkit, when it is made of [A-Za-z0-9_-], contains
//     no "__", does not start with "_" and fits, so that an engine's permission hook can name
//     mcp__SERVER__permission_prompt. Bare names contain no "__", natural names always do.
//   - hashed: "_" + the natural or bare form with other characters turned into "_", cut to
//     fit, + "_" + the first 8 hex digits of SHA-256(TOOLKIT NUL FUNCTION). Only hashed names
//     start with "_"; they are stable across processes but are decoded only through the
//     reverse map a listing fills.
const (
	interactionToolkit = "interaction"
	maxToolNameLen     = 64
	nameSeparator      = "__"
	hashDigits         = 8
)

// toolRef is one function of the catalog.
type toolRef struct{ toolkit, function string }

func (r toolRef) String() string { return r.toolkit + "." + r.function }

// naturalName returns the natural or bare name of ref, and false when ref needs a hashed name.
func naturalName(ref toolRef) (string, bool) {
	if ref.toolkit == interactionToolkit {
		f := ref.function
		ok := nameChars(f) && !strings.Contains(f, nameSeparator) && !strings.HasPrefix(f, "_") && len(f) <= maxToolNameLen
		return f, ok
	}
	name := ref.toolkit + nameSeparator + ref.function
	ok := nameChars(ref.toolkit) && nameChars(ref.function) &&
		!strings.Contains(ref.toolkit, nameSeparator) &&
		!strings.HasPrefix(ref.toolkit, "_") && !strings.HasSuffix(ref.toolkit, "_") &&
		len(name) <= maxToolNameLen
	return name, ok
}

// hashedName returns the hashed name of ref with digits hex digits of its hash.
func hashedName(ref toolRef, digits int) string {
	base := ref.toolkit + nameSeparator + ref.function
	if ref.toolkit == interactionToolkit {
		base = ref.function
	}
	var b strings.Builder
	for _, r := range base {
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	readable := b.String()
	if limit := maxToolNameLen - 2 - digits; len(readable) > limit {
		readable = readable[:limit]
	}
	sum := sha256.Sum256([]byte(ref.toolkit + "\x00" + ref.function))
	return "_" + readable + "_" + hex.EncodeToString(sum[:])[:digits]
}

// decodeName returns the function a natural or bare name stands for.
func decodeName(name string) (toolRef, bool) {
	ref := toolRef{toolkit: interactionToolkit, function: name}
	if i := strings.Index(name, nameSeparator); i >= 0 {
		ref = toolRef{toolkit: name[:i], function: name[i+len(nameSeparator):]}
	}
	n, ok := naturalName(ref)
	return ref, ok && n == name
}

// nameChars reports whether s is non-empty and made only of [A-Za-z0-9_-].
func nameChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// toolNames is the per-process map between MCP names and functions. Names are computed, so the
// map only matters for hashed names and for the (astronomically unlikely) hash collision, which
// it resolves by giving the later function a 16-digit hash.
type toolNames struct {
	mu     sync.Mutex
	byName map[string]toolRef
	byRef  map[toolRef]string
}

// name returns the MCP name of ref and remembers it.
func (n *toolNames) name(ref toolRef) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if name, ok := n.byRef[ref]; ok {
		return name
	}
	if n.byName == nil {
		n.byName, n.byRef = map[string]toolRef{}, map[toolRef]string{}
	}
	name, ok := naturalName(ref)
	if !ok {
		name = hashedName(ref, hashDigits)
		if other, taken := n.byName[name]; taken && other != ref {
			name = hashedName(ref, 2*hashDigits)
		}
	}
	n.byName[name], n.byRef[ref] = ref, name
	return name
}

// lookup returns the function named name: from the map, or decoded from a natural or bare
// name. ok is false for a hashed name this process has not listed.
func (n *toolNames) lookup(name string) (toolRef, bool) {
	n.mu.Lock()
	ref, ok := n.byName[name]
	n.mu.Unlock()
	if ok {
		return ref, true
	}
	return decodeName(name)
}
