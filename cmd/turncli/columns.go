package main

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// Columns are aligned by the width text takes on a terminal, not by its bytes or runes (as
// text/tabwriter does): a Chinese character or most emoji take two columns, a combining accent
// none. Every cell is inert already, so no control character reaches the count.

// columnGap is the spaces between two columns.
const columnGap = 2

// writeColumns prints rows, the header first, with each column as wide as its widest cell; the
// last column is not padded.
func writeColumns(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		widths = widen(widths, r)
	}
	var b strings.Builder
	for _, r := range rows {
		padRow(&b, widths, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// liveColumns prints rows one at a time, as they come (a feed cannot wait for its widest
// row): each column is as wide as its widest cell so far, and at least its minimum.
type liveColumns struct {
	w      io.Writer
	widths []int
}

func (l *liveColumns) row(cells ...string) error {
	l.widths = widen(l.widths, cells)
	var b strings.Builder
	padRow(&b, l.widths, cells)
	_, err := io.WriteString(l.w, b.String())
	return err
}

// widen grows widths to fit the cells of one row, the last one excepted.
func widen(widths []int, cells []string) []int {
	for i, cell := range cells[:max(0, len(cells)-1)] {
		if i == len(widths) {
			widths = append(widths, 0)
		}
		widths[i] = max(widths[i], textWidth(cell))
	}
	return widths
}

func padRow(b *strings.Builder, widths []int, cells []string) {
	for i, cell := range cells {
		b.WriteString(cell)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", widths[i]-textWidth(cell)+columnGap))
		}
	}
	b.WriteByte('\n')
}

// textWidth is how many terminal columns s takes.
func textWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// shorten cuts s to at most n columns, marking the cut.
func shorten(s string, n int) string {
	if textWidth(s) <= n {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		if used+runeWidth(r) > n-1 {
			break
		}
		b.WriteRune(r)
		used += runeWidth(r)
	}
	return b.String() + "…"
}
