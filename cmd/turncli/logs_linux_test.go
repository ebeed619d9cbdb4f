package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/turncli/turncli/internal/testpty"
	"github.com/turncli/turncli/primary/jobs"
)

// A job's log on a real terminal (a pseudo-terminal), then with --raw.
func TestAJobsLogCannotDriveTheOperatorsTerminal(t *testing.T) {
	r := newRig(t)
	n, err := r.env.Primary.Internals().Jobs.Start(context.Background(), jobs.JobSpec{Kind: "command", Channel: channel, Thread: thread, Agent: "tester", Workspace: t.TempDir(),
		Env:     []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, // no login files of the host
		Command: `printf 'first\n\033[31mred\033[0m\tcolumn\n\033]0;owned\007titled\n\033[2Aup\r\nlast\a\n'`})
	if err != nil {
		t.Fatal(err)
	}
	const raw = "first\n\x1b[31mred\x1b[0m\tcolumn\n\x1b]0;owned\x07titled\n\x1b[2Aup\r\nlast\a\n"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"SequencesAreDroppedAndControlsShown", nil, "first\nred\tcolumn\ntitled\nup\nlast\\a\n"},
		{"RawWritesTheBytes", []string{"--raw"}, raw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			terminal, read := openPTY(t)
			var errOut strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := append([]string{"jobs", "logs", fmt.Sprint(n), "-f", "--state-dir", r.stateDir}, tc.args...)
			code := run(ctx, args, strings.NewReader(""), terminal, &errOut)
			terminal.Close()
			if got := <-read; code != 0 || got != tc.want {
				t.Fatalf("exit %d (%s), the terminal got %q, want %q", code, errOut.String(), got, tc.want)
			}
		})
	}
}

// openPTY opens a pseudo-terminal without output processing (the terminal gets the bytes
// written) and returns its terminal side and, once that is closed, all that was written to it.
func openPTY(t *testing.T) (*os.File, <-chan string) {
	t.Helper()
	pts, ptmx := testpty.Open(t)
	tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO once the terminal side is closed
		read <- string(b)
	}()
	return pts, read
}
