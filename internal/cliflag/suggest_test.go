package cliflag

import "testing"

func TestSuggest(t *testing.T) {
	flags := []string{"grpc-listen", "http-listen", "agent-cli-listen", "metrics-listen", "state-dir", "log-format", "version"}
	for _, tc := range []struct {
		word, want string
		ok         bool
	}{
		{"grpc-listn", "grpc-listen", true},    // one deletion
		{"grcp-listen", "grpc-listen", true},   // a transposition is two edits
		{"stat-dir", "state-dir", true},        // short word, within 2
		{"versoin", "version", true},           // 2 edits
		{"metrics", "", false},                 // 7 edits: too far for a 7-letter word
		{"log-formatting", "log-format", true}, // 4 edits, within 14/3
		{"agent-cli-listen", "agent-cli-listen", true},
		{"xyz", "", false},
		{"", "", false},
	} {
		got, ok := Suggest(tc.word, flags)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Suggest(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := Suggest("shel", []string{"shell", "operators", "version", "help"}); got != "shell" || !ok {
		t.Errorf("Suggest(shel) = %q, %v", got, ok)
	}
	if got, ok := Suggest("x", nil); got != "" || ok {
		t.Errorf("Suggest without candidates = %q, %v", got, ok)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"é", "e", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
