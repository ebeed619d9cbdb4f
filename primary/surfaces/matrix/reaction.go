package matrix

import (
	"slices"
	"strings"
)

// The reaction keys read as a yes or a no. Clients send some emoji with or without the
// variation selector U+FE0F and with a skin tone, so keys are compared without them.
var (
	yesKeys = []string{"✅", "✔", "☑", "👍"}
	noKeys  = []string{"❌", "✖", "👎"}
)

// reactionSign is +1 for a yes key, -1 for a no key and 0 for any other reaction.
func reactionSign(key string) int {
	key = strings.Map(func(r rune) rune {
		if r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF) { // variation selector, skin tones
			return -1
		}
		return r
	}, key)
	switch {
	case slices.Contains(yesKeys, key):
		return 1
	case slices.Contains(noKeys, key):
		return -1
	}
	return 0
}
