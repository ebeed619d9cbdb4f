package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// unit says how a value prints.
type unit int

const (
	millis    unit = iota + 1 // value in ms
	nanos                     // value in ns
	perSec                    // value in completed calls per second
	byteCount                 // value in bytes
	kibibytes                 // value in KiB
	mebibytes                 // value in MiB
	txPerSec                  // value in committed transactions per second
	index                     // a dimensionless value, such as a fairness index
)

func (u unit) format(v float64) string {
	switch u {
	case millis:
		return fmt.Sprintf("%.2f ms", v)
	case nanos:
		return fmt.Sprintf("%.0f ns", v)
	case perSec:
		return fmt.Sprintf("%.0f calls/s", v)
	case byteCount:
		return fmt.Sprintf("%.0f B", v)
	case kibibytes:
		return fmt.Sprintf("%.1f KiB", v)
	case mebibytes:
		return fmt.Sprintf("%.1f MiB", v)
	case txPerSec:
		return fmt.Sprintf("%.0f tx/s", v)
	case index:
		return fmt.Sprintf("%.2f", v)
	}
	return "—" // no value: a measure that failed

}

// targetKind is how a row is judged.
type targetKind int

const (
	noTarget      targetKind = iota
	ratioAtMost              // value/floor ≤ limit
	ratioAtLeast             // value/floor ≥ limit
	valueAtMost              // value ≤ limit (in the row's unit)
	valueAtLeast             // value ≥ limit (in the row's unit)
	countAtLeast             // a count that must be reached; value ≥ limit
	recordedValue            // nothing to judge; the value is recorded
	completes                // the measure runs to its end: missed when it failed (broken)
)

type target struct {
	kind  targetKind
	limit float64
	text  string // as printed, e.g. "≤ 1.25×"
}

// row is one line of the table.
type row struct {
	key     string // for -run and -v
	measure string
	unit    unit
	value   float64
	floor   float64 // 0: no floor
	target  target
	rounds  []float64 // every round's value, for -v
	floors  []float64 // every round's floor
	ratios  []float64 // every round's value/floor, when both are measured back to back
	note    string
	broken  string // a failure that makes the row miss its target whatever its value
	// skipped says why the row could not be measured against its floor (a tool missing on this
	// machine, say): it is printed, and its target is neither met nor missed.
	skipped string
}

// ratio is the median of the rounds' ratios when the row has them (each round measured the
// value and its floor back to back, so a change of load between rounds cancels out), else the
// ratio of the medians.
func (r row) ratio() (float64, bool) {
	if len(r.ratios) > 0 {
		return median(r.ratios), true
	}
	if r.floor == 0 {
		return 0, false
	}
	return r.value / r.floor, true
}

// met reports whether the row meets its target; judged is false when there is nothing to judge.
func (r row) met() (met, judged bool) {
	if r.skipped != "" {
		return false, false
	}
	ratio, hasRatio := r.ratio()
	if r.broken != "" && r.target.kind != noTarget && r.target.kind != recordedValue {
		return false, true
	}
	switch r.target.kind {
	case ratioAtMost:
		return hasRatio && ratio <= r.target.limit, true
	case ratioAtLeast:
		return hasRatio && ratio >= r.target.limit, true
	case valueAtMost:
		return r.value <= r.target.limit, true
	case valueAtLeast:
		return r.value >= r.target.limit, true
	case countAtLeast:
		return r.value >= r.target.limit, true
	case completes:
		return r.broken == "", true
	}
	return false, false
}

func (r row) cells(smoke bool) []string {
	floor, ratio, met := "—", "—", "—"
	if r.floor != 0 {
		floor = r.unit.format(r.floor)
	}
	if v, ok := r.ratio(); ok {
		ratio = fmt.Sprintf("%.2f×", v)
	}
	if ok, judged := r.met(); judged && !smoke {
		met = map[bool]string{true: "yes", false: "**NO**"}[ok]
	}
	if r.skipped != "" {
		met = "skipped"
	}
	value := r.unit.format(r.value)
	if r.target.kind == countAtLeast {
		value = fmt.Sprintf("%.0f", r.value)
	}
	tgt := r.target.text
	if tgt == "" {
		tgt = "—"
	}
	return []string{r.measure, value, floor, ratio, tgt, met}
}

var header = []string{"measure", "value", "floor (same run)", "ratio", "target", "met?"}

// printTable writes the rows as an aligned text table, notes and (verbose) every round below.
func printTable(w io.Writer, rows []row, smoke, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(smoke), "\t"))
	}
	tw.Flush()
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.key, r.note)
		}
		if r.broken != "" {
			fmt.Fprintf(w, "  %s: FAILED: %s\n", r.key, r.broken)
		}
		if r.skipped != "" {
			fmt.Fprintf(w, "  %s: SKIPPED: %s\n", r.key, r.skipped)
		}
		if verbose && len(r.rounds) > 1 {
			fmt.Fprintf(w, "  %s rounds: %s", r.key, formatAll(r.unit, r.rounds))
			if len(r.floors) > 0 {
				fmt.Fprintf(w, "; floors: %s", formatAll(r.unit, r.floors))
			}
			if len(r.ratios) > 0 {
				fmt.Fprintf(w, "; ratios: %s", formatRatios(r.ratios))
			}
			fmt.Fprintln(w)
		}
	}
}

// writeMarkdown writes the rows as a markdown table followed by the notes.
func writeMarkdown(w io.Writer, rows []row, smoke bool) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(header)))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r.cells(smoke), " | "))
	}
	notes := false
	for _, r := range rows {
		if r.note == "" && r.broken == "" && r.skipped == "" {
			continue
		}
		if !notes {
			fmt.Fprintln(w)
			notes = true
		}
		note := r.note
		if r.broken != "" {
			note = strings.TrimPrefix(note+"; FAILED: "+r.broken, "; ")
		}
		if r.skipped != "" {
			note = strings.TrimPrefix(note+"; SKIPPED: "+r.skipped, "; ")
		}
		fmt.Fprintf(w, "- %s: %s\n", r.measure, note)
	}
}

func formatRatios(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%.2f×", v)
	}
	return strings.Join(parts, ", ")
}

func formatAll(u unit, vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = u.format(v)
	}
	return strings.Join(parts, ", ")
}

// summary counts the judged rows, those that met their target and those skipped.
func summary(rows []row) (judged, met, skipped int) {
	for _, r := range rows {
		if r.skipped != "" {
			skipped++
		}
		if ok, j := r.met(); j {
			judged++
			if ok {
				met++
			}
		}
	}
	return judged, met, skipped
}

// finite replaces NaN and infinities (from an empty measurement) by 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
