package cliflag

import "unicode/utf8"

// Suggest returns the candidate nearest to word, a mistyped command or flag, for a "did you
// mean" hint: the first of the nearest by edit distance (insertions, deletions, substitutions
// and swaps of two neighbouring characters each count one). It reports false when even the
// nearest is too far to be a typo of word: more than 2 edits and more than a third of word's
// length, or as many edits as word has characters (nothing of it is left).
func Suggest(word string, candidates []string) (string, bool) {
	best, bestDistance := "", -1
	for _, c := range candidates {
		if d := editDistance(word, c); bestDistance < 0 || d < bestDistance {
			best, bestDistance = c, d
		}
	}
	n := utf8.RuneCountInString(word)
	if bestDistance < 0 || bestDistance >= n || (bestDistance > 2 && bestDistance > n/3) {
		return "", false
	}
	return best, true
}

// editDistance is the optimal string alignment distance between a and b, counted in runes.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
