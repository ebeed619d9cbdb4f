package dashboard

import (
	"testing"
)

func TestRenderANSI(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"PlainTextIsEscaped", "<script>alert(1)</script> & \"x\"", "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;x&#34;"},
		{"ColourBecomesAFixedClass", "\x1b[31mred\x1b[0m plain", `<span class="fg-1">red</span> plain`},
		{"MarkupInsideColourStaysText", "\x1b[1;32m<img src=x onerror=alert(1)>\x1b[m", `<span class="b fg-2">&lt;img src=x onerror=alert(1)&gt;</span>`},
		{"BrightAndBackground", "\x1b[94;41mx", `<span class="fg-12 bg-1">x</span>`},
		{"Colour256TakesTheNearestOf16", "\x1b[38;5;196mx", `<span class="fg-9">x</span>`},
		{"TrueColourTakesTheNearestOf16", "\x1b[38;2;0;250;0mx", `<span class="fg-10">x</span>`},
		{"AttributesTurnOff", "\x1b[1;4ma\x1b[22mb\x1b[24mc", `<span class="b u">a</span><span class="u">b</span>c`},
		{"OtherSequencesAreDropped", "a\x1b[2Kb\x1b]0;title\x07c\x1b]8;;javascript:x\x1b\\d", "abcd"},
		{"ControlsAreDroppedButNewlinesAndTabsKept", "a\r\nb\tc\x00\x08d", "a\nb\tcd"},
		{"InvalidUTF8IsReplaced", "a\xffb", "a\uFFFDb"},
		{"UnknownParametersKeepTheState", "\x1b[31ma\x1b[?25mb", `<span class="fg-1">ab</span>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, used := renderANSI(plain, []byte(tc.in), false)
			if got != tc.want || used != len(tc.in) {
				t.Errorf("renderANSI(%q) = %q (used %d), want %q (used %d)", tc.in, got, used, tc.want, len(tc.in))
			}
		})
	}
}

func TestRenderANSIResumesAcrossChunks(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first        string
		wantUsed     int
		wantState    string
		second, want string
	}{
		{"StateCarriesOver", "\x1b[33mab", 7, "fg-3", "cd", `<span class="fg-3">cd</span>`},
		{"CutEscapeWaits", "x\x1b[3", 1, "", "\x1b[31my", `<span class="fg-1">y</span>`},
		{"CutCharacterWaits", "x\xe2\x82", 1, "", "\xe2\x82\xacy", "€y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st, used := renderANSI(plain, []byte(tc.first), true)
			if used != tc.wantUsed || st.classes() != tc.wantState {
				t.Fatalf("first chunk: used %d state %q, want %d %q", used, st.classes(), tc.wantUsed, tc.wantState)
			}
			// The page sends the state back as a class list.
			got, _, _ := renderANSI(parseSGRState(st.classes()), []byte(tc.second), true)
			if got != tc.want {
				t.Errorf("second chunk = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseSGRStateIgnoresAnythingOutsideTheFixedSet(t *testing.T) {
	got := parseSGRState(`b fg-3 bg-99 "><script> u fg-x`).classes()
	if got != "b u fg-3" {
		t.Errorf("state = %q, want %q", got, "b u fg-3")
	}
}
