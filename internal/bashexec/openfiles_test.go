package bashexec

import (
	"strings"
	"testing"
)

func TestOpenFilesLimitHoldsFromTheFirstLine(t *testing.T) {
	// The first line already sees the limit; the prologue's descriptor and BASH_ENV are gone;
	// a child bash inherits the limit quietly and cannot raise it; opening past it fails.
	spec := testSpec(t, `ulimit -Sn; ulimit -Hn; echo "fd3:$(test -e /proc/self/fd/3 && echo open || echo closed) bash_env:${BASH_ENV-unset}"
bash -c 'ulimit -n; ulimit -n 65 2>/dev/null && echo raised || echo not-raised'
for i in $(seq 100); do exec {fd}</dev/null || { echo "open failed at $i"; break; }; done`)
	spec.Env = append(spec.Env, "BASH_ENV=/etc/profile") // replaced, never sourced
	spec.OpenFiles = 64
	res, c := runCapture(t, t.Context(), spec)
	// Bash numbers {fd} from 10, so the opens fail before the 64th.
	want := "64\n64\nfd3:closed bash_env:unset\n64\nnot-raised\nopen failed at "
	if res.ExitCode != 0 || !strings.HasPrefix(c.stdout.String(), want) {
		t.Fatalf("exit %d, stdout %q, want %q; stderr %q", res.ExitCode, c.stdout.String(), want, c.stderr.String())
	}
}

func TestNoOpenFilesLimitLeavesTheEnvironmentAlone(t *testing.T) {
	spec := testSpec(t, `echo "${BASH_ENV-unset}"; test -e /proc/self/fd/3 && echo fd3-open || echo fd3-closed`)
	res, c := runCapture(t, t.Context(), spec)
	if res.ExitCode != 0 || c.stdout.String() != "unset\nfd3-closed\n" {
		t.Fatalf("exit %d, stdout %q", res.ExitCode, c.stdout.String())
	}
}
