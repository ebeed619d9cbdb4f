package cliflag

// Suggest returns the candidate nearest to word in edit distance (insertions, deletions and
// substitutions of one character each), when it is near enough to be what was meant: at most
// 2 edits, or at most a third of word's length for a longer word. Of equally near candidates
// the first wins, so the caller's order breaks ties.
func Suggest(word string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := editDistance(word, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len([]rune(word))/3) {
		return "", false
	}
	return best, true
}

// editDistance is the Levenshtein distance between a and b, by rune, in one row of the table.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			diag, row[j] = row[j], min(row[j]+1, row[j-1]+1, diag+cost)
		}
	}
	return row[len(rb)]
}
