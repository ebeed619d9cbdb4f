package jobs

import (
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/turncli/turncli/internal/jobproc"
	"github.com/turncli/turncli/internal/secretmask"
	"github.com/turncli/turncli/primary/secrets"
)

// A job's output is redacted whenever it is read (tails, reports, log reads), never when it is
// written: the log is one file that the job (or the mirror of a worker's output) writes in
// chunks of any size, so a secret may be split across two writes. Every read instead covers
// the longest live secret's length beyond its cut, so a secret cut by the read's edge is
// redacted whole (see secrets.Registry.MaskedRead).

// known is what is redacted from a job's output besides the live secrets: the values of
// Config.OutputSecrets, always, and the job's own (JobSpec.Secrets) while it is tracked.
// Values shorter than secrets.MinLength would match ordinary text and are left out.
func (m *Manager) known(t *tracked) iter.Seq[string] {
	return func(yield func(string) bool) {
		lists := [][]string{m.cfg.OutputSecrets}
		if t != nil {
			lists = append(lists, t.secrets)
		}
		for _, list := range lists {
			for _, v := range list {
				if len(v) >= secrets.MinLength && !yield(v) {
					return
				}
			}
		}
	}
}

// redact replaces the live secrets in s, and the known ones (see known).
func (m *Manager) redact(s string, t *tracked) string {
	s = m.cfg.Secrets.Redact(s)
	for v := range m.known(t) {
		s = strings.ReplaceAll(s, v, secretmask.Redacted)
	}
	return s
}

// reach is how far beyond a cut a secret may reach: the longest secret's length, less one.
func (m *Manager) reach(t *tracked) int {
	n := m.cfg.Secrets.MaxLength()
	for v := range m.known(t) {
		n = max(n, len(v))
	}
	return n - 1
}

// tail is the last TailChars characters of the log at path, redacted. The characters read
// before them let a secret cut by the tail's start be redacted whole.
func (m *Manager) tail(path string, t *tracked) string {
	raw := jobproc.Tail(path, jobproc.TailChars+m.reach(t))
	from := len(raw)
	for n := 0; n < jobproc.TailChars && from > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(raw[:from])
		from -= size
	}
	return m.redact(m.cfg.Secrets.RedactRange(raw, from, len(raw)), t)
}

// report returns an agent job's whole output, redacted and cut at MaxReportBytes. The bytes
// read past the cut let a secret it crosses be redacted whole.
func (m *Manager) report(path string, t *tracked) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, MaxReportBytes+m.reach(t))
	n, _ := io.ReadFull(f, buf)
	s := m.redact(m.cfg.Secrets.RedactRange(string(buf[:n]), 0, MaxReportBytes), t)
	s = strings.ToValidUTF8(s, "\uFFFD")
	if n > MaxReportBytes {
		s += fmt.Sprintf("\n[The report was cut at %d bytes; the whole output is in the job's log.]", MaxReportBytes)
	}
	return strings.TrimSpace(s)
}

// ReadLog returns up to limit bytes of job id's log from offset, with every live secret and
// every known one (see known) masked in place: the read keeps its length, so the next one
// starts at offset plus its length, and a secret cut by either end of the range is masked too.
func (m *Manager) ReadLog(id int64, path string, offset uint64, limit int) ([]byte, error) {
	if path == "" || offset > 1<<62 {
		return nil, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := m.cfg.Secrets.MaskedRead(f, fi.Size(), int64(offset), limit)
	if err != nil {
		return nil, err
	}
	s := string(data)
	for v := range m.known(m.tracked(id)) { // known in full, masked where whole
		s = strings.ReplaceAll(s, v, secrets.MaskOf(len(v)))
	}
	return []byte(s), nil
}
