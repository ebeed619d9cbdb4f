package cliflag

import "testing"

func TestSuggest(t *testing.T) {
	nouns := []string{"approvals", "call-approvals", "prompts", "jobs", "events", "whoami"}
	for _, tc := range []struct {
		name, word string
		candidates []string
		want       string
		ok         bool
	}{
		{"AMissingLetterIsOneEdit", "aprovals", nouns, "approvals", true},
		{"AnExtraLetterIsOneEdit", "lss", []string{"ls", "show", "logs"}, "ls", true},
		{"TwoSwappedLettersAreOneEdit", "jbos", nouns, "jobs", true},
		{"TwoEditsOfAShortWordAreATypo", "evnts2", nouns, "events", true},
		{"ALongWordMayBeAThirdWrong", "cal-aprovalz", nouns, "call-approvals", true},
		{"ThreeEditsOfAShortWordAreNot", "jxxxs", nouns, "", false},
		{"AWordReplacedWholeIsNoTypo", "xy", []string{"ls"}, "", false},
		{"TheFirstOfTheNearestWins", "rm", []string{"ra", "rb"}, "ra", true},
		{"CharactersAreRunesNotBytes", "pröm", []string{"prom", "pr"}, "prom", true},
		{"NoCandidatesNoSuggestion", "jobs", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Suggest(tc.word, tc.candidates)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Suggest(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"ca", "abc", 3}, {"ümlaut", "umlaut", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
