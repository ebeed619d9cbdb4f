package main

import (
	"strings"
	"testing"
)

func TestColumnsAlignByTerminalWidth(t *testing.T) {
	var out strings.Builder
	err := writeColumns(&out, [][]string{
		{"ID", "AGENT", "TITLE"},
		{"1", "部署", "wide: two columns a character"},
		{"22", "e\u0301te\u0301", "combining accents take none"},
		{"333", "🎉", "an emoji takes two"},
		{"4", "ünï", "precomposed letters take one"},
	})
	want := "" +
		"ID   AGENT  TITLE\n" +
		"1    部署   wide: two columns a character\n" +
		"22   e\u0301te\u0301    combining accents take none\n" +
		"333  🎉     an emoji takes two\n" +
		"4    ünï    precomposed letters take one\n"
	if err != nil || out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestALiveFeedWidensAColumnFromTheRowThatNeedsIt(t *testing.T) {
	var out strings.Builder
	feed := liveColumns{w: &out, widths: []int{4, 3}}
	for _, r := range [][]string{{"T", "K", "DATA"}, {"1", "kind", "x"}, {"2", "k", "y"}, {"3", "人人", "z"}} {
		if err := feed.row(r...); err != nil {
			t.Fatal(err)
		}
	}
	want := "" +
		"T     K    DATA\n" +
		"1     kind  x\n" +
		"2     k     y\n" +
		"3     人人  z\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestShortenCutsByTerminalWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"one too long", 11, "one too lo…"},
		{"部署部署部署", 7, "部署部…"},
		{"部署部署部署", 6, "部署…"},
	} {
		if got := shorten(tc.in, tc.n); got != tc.want || textWidth(got) > tc.n {
			t.Errorf("shorten(%q, %d) = %q (%d columns), want %q", tc.in, tc.n, got, textWidth(got), tc.want)
		}
	}
}
