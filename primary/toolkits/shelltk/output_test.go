package shelltk

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/canonjson"
)

// pattern returns n bytes that differ from position to position, so a misplaced byte shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

func TestCaptureKeepsFirstAndLastBytes(t *testing.T) {
	tests := []struct {
		name  string
		total int
		chunk int
	}{
		{"EmptyStreamKeepsNothing", 0, 1},
		{"ShortStreamIsKeptWhole", 100, 7},
		{"StreamFillingHeadIsKeptWhole", headMax, 1000},
		{"StreamFillingHeadAndTailIsKeptWhole", headMax + tailMax, 333},
		{"OneByteMoreDropsOne", headMax + tailMax + 1, 1 << 20},
		{"ByteByByteWritesWrapTheTail", headMax + 3*tailMax + 5, 1},
		{"OddChunksWrapTheTail", 100_000, 4099},
		{"ChunkLargerThanTailReplacesIt", 100_000, 50_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := pattern(tc.total)
			var c capture
			for p := data; len(p) > 0; {
				n := min(tc.chunk, len(p))
				c.write(p[:n])
				p = p[n:]
			}
			head, tail, dropped := c.parts()
			wantHead := data[:min(headMax, len(data))]
			wantTail := data[len(wantHead):]
			if len(wantTail) > tailMax {
				wantTail = wantTail[len(wantTail)-tailMax:]
			}
			if !bytes.Equal(head, wantHead) || !bytes.Equal(tail, wantTail) {
				t.Fatalf("head %d bytes, tail %d bytes: not the first and last bytes written", len(head), len(tail))
			}
			if want := int64(tc.total - len(wantHead) - len(wantTail)); dropped != want {
				t.Fatalf("dropped = %d, want %d", dropped, want)
			}
		})
	}
}

var markerRE = regexp.MustCompile(`\n\[… (\d+) bytes omitted …\]\n`)

// omittedCount returns the number in s's marker, or -1 when s has none.
func omittedCount(t *testing.T, s string) int64 {
	t.Helper()
	m := markerRE.FindAllStringSubmatch(s, -1)
	if len(m) == 0 {
		return -1
	}
	if len(m) > 1 {
		t.Fatalf("%d markers in output", len(m))
	}
	n, err := strconv.ParseInt(m[0][1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRender(t *testing.T) {
	t.Run("ShortOutputIsUnchanged", func(t *testing.T) {
		if got := render([]byte("héllo\n"), []byte("wörld"), 0, 100); got != "héllo\nwörld" {
			t.Fatalf("render = %q", got)
		}
	})
	t.Run("InvalidUTF8BecomesReplacementCharacter", func(t *testing.T) {
		if got := render([]byte("a\xffb"), nil, 0, 100); got != "a\uFFFDb" {
			t.Fatalf("render = %q", got)
		}
	})
	t.Run("RuneSplitAtHeadAndTailJoinIsKept", func(t *testing.T) {
		if got := render([]byte("x\xc3"), []byte("\xa9y"), 0, 100); got != "xéy" {
			t.Fatalf("render = %q", got)
		}
	})
	t.Run("LongOutputKeepsStartAndEndAndCountsTheRest", func(t *testing.T) {
		data := pattern(10_000)
		got := render(data, nil, 0, 1000)
		n := omittedCount(t, got)
		parts := markerRE.Split(got, 2)
		if n < 0 || !bytes.HasPrefix(data, []byte(parts[0])) || !bytes.HasSuffix(data, []byte(parts[1])) {
			t.Fatalf("render = %q", got)
		}
		if kept := int64(len(parts[0]) + len(parts[1])); kept+n != int64(len(data)) {
			t.Fatalf("kept %d + omitted %d != %d", kept, n, len(data))
		}
		if len(parts[0]) == 0 || len(parts[1]) <= len(parts[0]) {
			t.Fatalf("kept %d bytes of the start and %d of the end; want both, more of the end", len(parts[0]), len(parts[1]))
		}
	})
	t.Run("DroppedMiddleIsCountedInTheMarker", func(t *testing.T) {
		got := render([]byte("start"), []byte("end"), 42, 1000)
		if got != "start"+marker(42)+"end" {
			t.Fatalf("render = %q", got)
		}
	})
}

func TestRenderStaysWithinBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 30_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	inputs := map[string][]byte{
		"Text":            pattern(30_000),
		"NulBytes":        make([]byte, 30_000),
		"QuotesAndSlashs": bytes.Repeat([]byte(`"\`), 15_000),
		"Newlines":        bytes.Repeat([]byte("\n"), 30_000),
		"MultiByte":       bytes.Repeat([]byte("日本€"), 3_000),
		"RandomBytes":     random,
	}
	for name, data := range inputs {
		for _, budget := range []int{100, 1000, outputBudget / 2, outputBudget} {
			var c capture
			c.write(data)
			head, tail, dropped := c.parts()
			got := render(head, tail, dropped, budget)
			if !utf8.ValidString(got) {
				t.Fatalf("%s, budget %d: output is not valid UTF-8", name, budget)
			}
			enc, err := canonjson.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc)-2 > budget {
				t.Fatalf("%s, budget %d: %d bytes of JSON string contents", name, budget, len(enc)-2)
			}
			if omittedCount(t, got) <= 0 {
				t.Fatalf("%s, budget %d: no omission marker", name, budget)
			}
		}
	}
}

func TestRunOutputIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		command string
		stdout  int64 // bytes written, when the test checks the count
		stderr  int64
	}{
		{"LargeTextOnBothStreams", `head -c 100000 /dev/zero | tr '\0' a; head -c 50000 /dev/zero | tr '\0' b >&2`, 100_000, 50_000},
		{"LargeStdoutSmallStderr", `head -c 1000000 /dev/zero | tr '\0' a; echo small >&2`, 1_000_000, 6},
		{"RandomBytes", `head -c 300000 /dev/urandom; head -c 300000 /dev/urandom >&2`, 300_000, 300_000},
		{"ControlCharacters", `head -c 200000 /dev/zero; head -c 200000 /dev/zero | tr '\0' '\1' >&2`, 200_000, 200_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			v := e.mustCall(t, newResponse(t, "r1"), "run_shell_command", `{"command":`+quote(tc.command)+`}`)
			enc, err := canonjson.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > 14<<10 {
				t.Fatalf("result is %d bytes of JSON, want at most 14 KiB", len(enc))
			}
			for _, s := range []struct {
				name    string
				written int64
			}{{"stdout", tc.stdout}, {"stderr", tc.stderr}} {
				out := v[s.name].(string)
				n := omittedCount(t, out)
				if n < 0 {
					if int64(len(out)) != s.written {
						t.Fatalf("%s has no marker but %d of %d bytes", s.name, len(out), s.written)
					}
					continue
				}
				if !strings.HasPrefix(tc.name, "Random") { // replacement characters change lengths
					parts := markerRE.Split(out, 2)
					if kept := int64(len(parts[0]) + len(parts[1])); kept+n != s.written {
						t.Fatalf("%s: kept %d + omitted %d != written %d", s.name, kept, n, s.written)
					}
				}
			}
		})
	}
}
