package jobproc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/jobproc"
)

func TestTail(t *testing.T) {
	long := strings.Repeat("é", 10000) + strings.Repeat("😀", 7000) + "end"
	cases := []struct {
		name    string
		content string
		n       int
		want    string
	}{
		{name: "ShortFileIsWhole", content: "hello\n", n: 10, want: "hello\n"},
		{name: "CountsCharactersNotBytes", content: "aé😀b", n: 3, want: "é😀b"},
		{name: "LongFileKeepsItsLastCharacters", content: long, n: jobproc.TailChars,
			want: strings.Repeat("😀", jobproc.TailChars-3) + "end"},
		{name: "MultibyteCutByTheWindowIsDropped", content: strings.Repeat("😀", 30000), n: 5, want: strings.Repeat("😀", 5)},
		{name: "TwoByteCharactersAcrossTheWindow", content: "x" + strings.Repeat("é", 9000), n: 4001, want: strings.Repeat("é", 4001)},
		{name: "InvalidUTF8CountsOnePerByteAndIsReplaced", content: "ok\xff\xfe", n: 3, want: "k\uFFFD\uFFFD"},
		{name: "EmptyFile", content: "", n: 10, want: ""},
	}
	dir := t.TempDir()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "log"+string(rune('a'+i)))
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got := jobproc.Tail(path, c.n)
			if got != c.want {
				t.Errorf("Tail = %d chars %q…, want %d chars %q…", utf8.RuneCountInString(got), head(got), utf8.RuneCountInString(c.want), head(c.want))
			}
		})
	}
	t.Run("MissingFileIsEmpty", func(t *testing.T) {
		if got := jobproc.Tail(filepath.Join(dir, "missing"), 10); got != "" {
			t.Errorf("Tail of a missing file = %q", got)
		}
	})
}

func head(s string) string {
	r := []rune(s)
	return string(r[:min(len(r), 12)])
}
