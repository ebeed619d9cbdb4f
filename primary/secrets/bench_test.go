package secrets_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/turncli/turncli/primary/secrets"
)

// liveGrants returns a registry holding n live tokens, and the tokens.
func liveGrants(n int) (*secrets.Registry, []string) {
	r := secrets.New()
	toks := make([]string, n)
	for i := range toks {
		toks[i] = token()
		r.Add(toks[i])
	}
	return r, toks
}

// jobLog is a 64 KiB log of build output with ten live tokens in it.
func jobLog(toks []string) string {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "ok  \tgithub.com/example/pkg%d\t0.%03ds\tsha256:%s\n", i, i%1000, strings.Repeat("9f", 16))
		if i%100 == 0 {
			fmt.Fprintf(&b, "export MINDROOM_AGENT_CLI_TOKEN=%s\n", toks[i%len(toks)])
		}
	}
	return b.String()
}

// BenchmarkRedact64KiBWith10000LiveGrants is one scan and a set lookup per candidate.
func BenchmarkRedact64KiBWith10000LiveGrants(b *testing.B) {
	r, toks := liveGrants(10000)
	text := jobLog(toks)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if out := r.Redact(text); !strings.Contains(out, "(redacted)") {
			b.Fatal("nothing redacted")
		}
	}
}

// BenchmarkReplaceEach64KiBWith10000LiveGrants is the search per secret it replaces.
func BenchmarkReplaceEach64KiBWith10000LiveGrants(b *testing.B) {
	_, toks := liveGrants(10000)
	text := jobLog(toks)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		out := text
		for _, s := range toks {
			out = strings.ReplaceAll(out, s, "(redacted)")
		}
		if !strings.Contains(out, "(redacted)") {
			b.Fatal("nothing redacted")
		}
	}
}

// BenchmarkRedact1MiBOfBase64With10000LiveGrants is the worst case: one base64url run, every
// window a candidate.
func BenchmarkRedact1MiBOfBase64With10000LiveGrants(b *testing.B) {
	r, _ := liveGrants(10000)
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString(token())
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.Redact(text)
	}
}

// BenchmarkRedactLogLineWithoutSecrets is what every log line pays.
func BenchmarkRedactLogLineWithoutSecrets(b *testing.B) {
	r, _ := liveGrants(10000)
	line := "job finished job=42 outcome=\"exited with code 0\" saved=true"
	b.ReportAllocs()
	for b.Loop() {
		r.Redact(line)
	}
}
