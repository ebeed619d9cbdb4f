package jobproc

import (
	"io"
	"os"
	"unicode/utf8"
)

// TailChars is how many characters of output a job's tail keeps (contract: interaction controls).
const TailChars = 6000

// Tail returns the last n characters of the file at path ("" when it cannot be read).
// Invalid UTF-8 counts one character per byte and is replaced.
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	// n characters take at most n*UTF8Max bytes; one extra rune's worth lets a cut
	// multi-byte character at the start be dropped rather than counted.
	window := int64(n*utf8.UTFMax + utf8.UTFMax)
	off := max(fi.Size()-window, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return ""
	}
	if off > 0 { // skip a character cut by the window
		for i := 0; i < utf8.UTFMax && len(buf) > 0 && !utf8.RuneStart(buf[0]); i++ {
			buf = buf[1:]
		}
	}
	return lastChars(string(buf), n)
}

// lastChars returns the last n characters of s.
func lastChars(s string, n int) string {
	runes := []rune(s)
	if len(runes) <= n {
		return string(runes)
	}
	return string(runes[len(runes)-n:])
}
