package threadfeed

import "unicode/utf8"

// cut splits text into pieces of at most size bytes (size >= utf8.UTFMax), each ending on a
// character boundary, in order; none for an empty text.
func cut(text string, size int) []string {
	var out []string
	for len(text) > 0 {
		n := min(size, len(text))
		for n < len(text) && n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// preview is text cut to size bytes on a character boundary (whole when size is zero), and
// whether it was cut.
func preview(text string, size int) (string, bool) {
	if size == 0 || len(text) <= size {
		return text, false
	}
	return cut(text, size)[0], true
}
