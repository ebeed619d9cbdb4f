package threadfeed

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	t.Run("PiecesJoinToTheTextAndNeverSplitACharacter", func(t *testing.T) {
		text := strings.Repeat("aé€😀", 300) // 1, 2, 3 and 4 bytes
		for _, size := range []int{4, 5, 7, 1024} {
			pieces := cut(text, size)
			if strings.Join(pieces, "") != text {
				t.Fatalf("size %d: the pieces do not join to the text", size)
			}
			for i, p := range pieces {
				if len(p) > size || len(p) == 0 || !utf8.ValidString(p) {
					t.Fatalf("size %d: piece %d is %d bytes, valid %v", size, i, len(p), utf8.ValidString(p))
				}
			}
		}
	})
	t.Run("AnEmptyTextHasNoPieces", func(t *testing.T) {
		if got := cut("", 1024); len(got) != 0 {
			t.Fatalf("cut of nothing: %q", got)
		}
	})
	t.Run("ATextOfExactlyTheSizeIsOnePiece", func(t *testing.T) {
		if got := cut(strings.Repeat("a", 1024), 1024); len(got) != 1 {
			t.Fatalf("%d pieces, want 1", len(got))
		}
		if got := cut(strings.Repeat("a", 1025), 1024); len(got) != 2 || len(got[1]) != 1 {
			t.Fatalf("one byte over: %d pieces, want 2", len(got))
		}
	})
}

func TestPreview(t *testing.T) {
	for _, c := range []struct {
		text      string
		size      int
		want      string
		truncated bool
	}{
		{"abcd", 0, "abcd", false},
		{"abcd", 4, "abcd", false},
		{"abcde", 4, "abcd", true},
		{"abcé", 4, "abc", true}, // é would be cut in half
	} {
		got, truncated := preview(c.text, c.size)
		if got != c.want || truncated != c.truncated {
			t.Errorf("preview(%q, %d) = %q, %v; want %q, %v", c.text, c.size, got, truncated, c.want, c.truncated)
		}
	}
}

func TestView(t *testing.T) {
	for _, c := range []struct {
		v    View
		want string // "" when accepted
	}{
		{View{ChunkBytes: MinChunkBytes}, ""},
		{View{ChunkBytes: MinChunkBytes - 1}, "the chunk size is 1023 bytes; 1024..1048576 are allowed"},
		{View{ChunkBytes: MaxChunkBytes}, ""},
		{View{ChunkBytes: MaxChunkBytes + 1}, "the chunk size is 1048577 bytes; 1024..1048576 are allowed"},
		{View{CardBytes: MaxCardBytes}, ""},
		{View{CardBytes: MaxCardBytes + 1}, "the card size is 65537 bytes; 0..65536 are allowed (0: the whole text is shown)"},
		{View{CardBytes: -1}, "the card size is -1 bytes; 0..65536 are allowed (0: the whole text is shown)"},
		{View{Thread: "t"}, "a thread needs its channel"},
	} {
		_, err := c.v.withDefaults()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
	if v, _ := (View{}).withDefaults(); v.ChunkBytes != DefaultChunkBytes {
		t.Errorf("default chunk size %d, want %d", v.ChunkBytes, DefaultChunkBytes)
	}
}
