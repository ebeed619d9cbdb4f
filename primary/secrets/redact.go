package secrets

import (
	"crypto/sha256"
	"slices"
	"strings"

	"github.com/turncli/turncli/internal/secretmask"
)

// span is the byte range [start, end) of a secret in a text.
type span struct{ start, end int }

// spans returns where live secrets are in s, sorted and without overlaps.
func (r *Registry) spans(s string) []span {
	r.refresh()
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []span
	if len(r.digests) > 0 && len(s) >= TokenLength {
		out = r.tokenSpans(s, out)
	}
	for secret := range r.others {
		for off := 0; ; {
			i := strings.Index(s[off:], secret)
			if i < 0 {
				break
			}
			out = append(out, span{off + i, off + i + len(secret)})
			off += i + len(secret)
		}
	}
	return merge(out)
}

// tokenSpans appends the token-shaped live secrets in s: every TokenLength window of a
// base64url run that can end a token is hashed and looked up, so a token glued to other
// base64url text is found too. The caller holds r.mu.
func (r *Registry) tokenSpans(s string, out []span) []span {
	var buf [TokenLength]byte
	for i := 0; i < len(s); {
		if !base64url[s[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && base64url[s[j]] {
			j++
		}
		for k := i; k+TokenLength <= j; k++ {
			if !tokenEnd[s[k+TokenLength-1]] {
				continue
			}
			copy(buf[:], s[k:k+TokenLength]) // hashed without allocating
			if _, live := r.digests[sha256.Sum256(buf[:])]; live {
				out = append(out, span{k, k + TokenLength})
				k += TokenLength - 1
			}
		}
		i = j
	}
	return out
}

// merge sorts spans and joins those that overlap (two secrets side by side stay two).
func merge(in []span) []span {
	if len(in) < 2 {
		return in
	}
	slices.SortFunc(in, func(a, b span) int { return a.start - b.start })
	out := in[:1]
	for _, sp := range in[1:] {
		last := &out[len(out)-1]
		if sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Redact returns s with every live secret in it replaced by secretmask.Redacted. A text
// without one is returned as it is, without allocating.
func (r *Registry) Redact(s string) string {
	sp := r.spans(s)
	if len(sp) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, x := range sp {
		b.WriteString(s[prev:x.start])
		b.WriteString(secretmask.Redacted)
		prev = x.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

// RedactAll redacts every string of ss in place and returns ss.
func (r *Registry) RedactAll(ss []string) []string {
	for i, s := range ss {
		ss[i] = r.Redact(s)
	}
	return ss
}

// Mask overwrites every live secret in b with a mask of the same length (see MaskOf), so the
// text keeps its length and every byte its offset: a byte range read from a file and masked
// can be paged through by offsets.
func (r *Registry) Mask(b []byte) {
	for _, x := range r.spans(string(b)) {
		copy(b[x.start:x.end], MaskOf(x.end-x.start))
	}
}

// MaskOf is the mask of a secret n bytes long: secretmask.Redacted padded with '*' to n
// bytes, or its first n bytes when n is shorter.
func MaskOf(n int) string {
	if n <= len(secretmask.Redacted) {
		return secretmask.Redacted[:n]
	}
	return secretmask.Redacted + strings.Repeat("*", n-len(secretmask.Redacted))
}

// RedactRange returns the bytes [from, to) of text with every live secret redacted, widened
// to take in whole any secret that crosses either edge. text is a piece read from something
// longer: reading MaxLength-1 bytes beyond each edge that the whole goes on past lets a
// secret cut by the edge be found, while what of a secret the read itself cut stays outside.
func (r *Registry) RedactRange(text string, from, to int) string {
	from, to = max(from, 0), min(to, len(text))
	if from >= to {
		return ""
	}
	var b strings.Builder
	prev := from
	for _, x := range r.spans(text) {
		if x.end <= from || x.start >= to {
			continue
		}
		if x.start > prev {
			b.WriteString(text[prev:x.start])
		}
		b.WriteString(secretmask.Redacted)
		prev = x.end
	}
	if prev < to {
		b.WriteString(text[prev:to])
	}
	return b.String()
}
