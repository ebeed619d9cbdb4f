package termtext

import (
	"strings"
	"testing"
)

func TestInertShowsControlsAndInvisibleCharactersAsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":               "plain text",
		"\x1b[31mred\x1b[0m":       `\x1b[31mred\x1b[0m`,
		"a\tb\nc\r":                `a\tb\nc\r`,
		"abc\u202egnp.exe":         `abc\u202egnp.exe`,
		"zero\u200bwidth":          `zero\u200bwidth`,
		"c1 \u009b31m":             `c1 \u009b31m`,
		"bad \xff byte":            `bad \xff byte`,
		"a real \uFFFD stays":      "a real \uFFFD stays",
		"ünïcödé and emoji 🎉 stay": "ünïcödé and emoji 🎉 stay",
	} {
		if got := Inert(in); got != want {
			t.Errorf("Inert(%q) = %q, want %q", in, got, want)
		}
	}
}

// writerCases are streams and what a terminal is shown of them.
var writerCases = []struct{ name, in, want string }{
	{"TextLinesAndTabsPass", "a\tb\nünï 🎉\n", "a\tb\nünï 🎉\n"},
	{"ColoursAreDropped", "\x1b[1;31mred\x1b[0m\n", "red\n"},
	{"CursorMovesAndClearsAreDropped", "\x1b[2J\x1b[H\x1b[10;20Hx\x1b[?25l\n", "x\n"},
	{"AWindowTitleEndedByBELIsDropped", "\x1b]0;owned\x07text", "text"},
	{"AHyperlinkEndedBySTIsDropped", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
	{"DeviceControlStringsAreDropped", "\x1bPq#0;2;0;0;0\x1b\\ok", "ok"},
	{"TwoCharacterSequencesAreDropped", "\x1b7\x1b8\x1bc\x1b(Bok", "ok"},
	{"C1SequencesAreDropped", "\u009b2J\u009d0;t\u009cok", "ok"},
	{"AnUnterminatedStringEndsAtTheLine", "\x1b]0;no end\nnext\n", "\nnext\n"},
	{"ABrokenSequenceLeavesItsText", "\x1b[12\nx", "\nx"},
	{"ALoneEscapeIsShown", "a\x1b\x01b", `a\x1b\x01b`},
	{"OtherControlsAreShown", "bell\a bs\b del\x7f nul\x00", `bell\a bs\b del\x7f nul\x00`},
	{"CRLFIsANewline", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"ALoneCarriageReturnIsShown", "10%\r20%\rdone\n", `10%\r20%\rdone` + "\n"},
	{"InvisibleFormatCharactersAreShown", "abc\u202egnp.exe zero\u200bwidth", `abc\u202egnp.exe zero\u200bwidth`},
	{"BytesThatAreNotUTF8AreShown", "bad \xff\xfe byte", `bad \xff\xfe byte`},
	{"AnIncompleteEndIsShownOnFlush", "end\r\xe2\x82", `end\r\xe2\x82`},
	{"AnIncompleteSequenceAtTheEndIsDropped", "end\x1b[3", "end"},
}

func TestTheWriterLetsNoSequenceAct(t *testing.T) {
	for _, tc := range writerCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := filter(t, [][]byte{[]byte(tc.in)}); got != tc.want {
				t.Fatalf("%q: got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTextIsWhatTheWriterShows(t *testing.T) {
	for _, tc := range writerCases {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A log is read in chunks that may cut a sequence or a character anywhere.
func TestTheWriterIsTheSameWhereverTheStreamIsCut(t *testing.T) {
	for _, tc := range writerCases {
		t.Run(tc.name, func(t *testing.T) {
			var bytewise [][]byte
			for i := range len(tc.in) {
				bytewise = append(bytewise, []byte{tc.in[i]})
			}
			if got := filter(t, bytewise); got != tc.want {
				t.Fatalf("%q a byte at a time: got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func filter(t *testing.T, chunks [][]byte) string {
	t.Helper()
	var out strings.Builder
	w := NewWriter(&out)
	for _, c := range chunks {
		if n, err := w.Write(c); n != len(c) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
