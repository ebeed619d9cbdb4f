package e2e

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReadmeWalkthrough types the README's walkthrough (see walkthrough_doc_test.go for how it
// is marked) into real Bash sessions in a copy of this repository, as a person following it
// would: `make build`, `make run`, `make shell`, `./bin/turncli`, curl. Each command must exit
// 0 and print what the README shows, so the README cannot drift from what the binaries do.
func TestReadmeWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binaries through make")
	}
	for _, tool := range []string{"make", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walkthrough uses %s: %v", tool, err)
		}
	}
	root := filepath.Join("..", "..")
	doc, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseWalkthrough(doc)
	doc.Close()
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(steps) < 10 { // the quick start types more than that; fewer means markers were lost
		t.Fatalf("README.md's walkthrough has %d commands; its markers were lost", len(steps))
	}

	clone := filepath.Join(shellTempDir(t), "turncli")
	copyRepository(t, root, clone)
	env := walkthroughEnv(t)
	terminals := map[string]*wtTerminal{}
	for i, step := range steps {
		term := terminals[step.terminal]
		if term == nil {
			term = startTerminal(t, step.terminal, clone, env)
			terminals[step.terminal] = term
		}
		if step.until != "" {
			if err := term.typeUntil(step.input, step.until, wtPatience(step.input)); err != nil {
				t.Fatalf("README.md:%d: %s: %v\noutput:\n%s", step.line, step.input, err, term.since(0))
			}
			continue
		}
		got, code, err := term.typeAndWait(i, step.input, wtPatience(step.input))
		if err != nil {
			t.Fatalf("README.md:%d: %s: %v\noutput:\n%s", step.line, step.input, err, got)
		}
		t.Logf("README.md:%d: $ %s\n%s", step.line, step.input, strings.Join(got, "\n")) // what to show when editing the README
		if code != 0 {
			t.Errorf("README.md:%d: %s: exit status %d\noutput:\n%s", step.line, step.input, code, strings.Join(got, "\n"))
		}
		if !wtLinesMatch(step.want, got) {
			t.Errorf("README.md:%d: %s: the output is not what the README shows\nREADME:\n%s\nprinted:\n%s",
				step.line, step.input, strings.Join(step.want, "\n"), strings.Join(got, "\n"))
		}
		if t.Failed() {
			return
		}
	}
}

// wtPatience is how long a command may take: one that builds (make) may compile the whole
// module on a busy machine; the others answer in seconds.
func wtPatience(input string) time.Duration {
	if strings.HasPrefix(input, "make ") {
		return 15 * time.Minute
	}
	return 2 * time.Minute
}

// walkthroughEnv is a terminal's environment: a person's, not the test's. The Go caches are
// shared, and -trimpath keeps the copy's build keys independent of its directory, so a second
// run reuses the first one's compilation. Every listener of `make run` picks a free port (the
// README's RUN_ARGS), so the walkthrough never collides with a primary already running here.
// Shells are not isolated, as where the primary is not root, so the test reads the same
// everywhere: a sandboxed `make shell` runs Bash on a pseudo-terminal of its sandbox, whose echo
// of typed-ahead input interleaves with the output (the README allows the lines a sandbox adds).
func walkthroughEnv(t *testing.T) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + shellTempDir(t), "USER=alice", "LANG=C.UTF-8", "GOFLAGS=-trimpath",
		"MINDROOM_ISOLATION=off",
		"RUN_ARGS=--grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --agent-cli-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0"}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV", "GOROOT"} {
		env = append(env, name+"="+vals[i])
	}
	return env
}

// copyRepository copies the working tree (what a clone holds: no .git, no build or state
// output) so the walkthrough's build and state stay out of this one.
func copyRepository(t *testing.T, from, to string) {
	t.Helper()
	skip := map[string]bool{".git": true, "bin": true, ".turncli": true}
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if skip[rel] || strings.HasPrefix(rel, ".turncli-") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // .git is a file in a worktree
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm())
		default:
			return nil // symlinks and sockets are no part of a clone
		}
	})
	if err != nil {
		t.Fatalf("copy the repository: %v", err)
	}
}

// wtTerminal is a Bash session reading what the test types, its output (stdout and stderr, as
// on a terminal) collected in order.
type wtTerminal struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mark int // where the output of the next command starts; only the test's goroutine uses it

	mu      sync.Mutex
	out     []byte
	changed chan struct{}
	ended   bool
}

func startTerminal(t *testing.T, name, dir string, env []string) *wtTerminal {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its daemons are stopped with it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	term := &wtTerminal{name: name, cmd: cmd, stdin: stdin, changed: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		term.read(pr)
	}()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		// The group holds what the session started (make, the primary, the shell): stop it as
		// Ctrl-C would, then for good.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(mpDeadline):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever outlived bash in its group
		pr.Close()
		<-read
		if t.Failed() {
			t.Logf("terminal %s printed:\n%s", name, term.since(0))
		}
	})
	return term
}

func (term *wtTerminal) read(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		term.mu.Lock()
		term.out = append(term.out, buf[:n]...)
		if err != nil {
			term.ended = true
		}
		close(term.changed)
		term.changed = make(chan struct{})
		term.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// since is the output from offset on.
func (term *wtTerminal) since(offset int) string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return string(term.out[offset:])
}

// await waits until found, given the output from offset, reports a position (or -1).
func (term *wtTerminal) await(offset int, patience time.Duration, found func(string) int) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	for {
		term.mu.Lock()
		out, changed, ended := string(term.out[offset:]), term.changed, term.ended
		term.mu.Unlock()
		if at := found(out); at >= 0 {
			return at, out, nil
		}
		if ended {
			return -1, out, fmt.Errorf("terminal %s ended", term.name)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return -1, out, fmt.Errorf("terminal %s: no answer within %v", term.name, patience)
		}
	}
}

func (term *wtTerminal) offset() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return len(term.out)
}

// typeUntil types input and waits for its output to hold text. The next command's output
// starts after what was printed by then.
func (term *wtTerminal) typeUntil(input, text string, patience time.Duration) error {
	if _, err := io.WriteString(term.stdin, input+"\n"); err != nil {
		return err
	}
	_, _, err := term.await(term.mark, patience, func(out string) int { return strings.Index(out, text) })
	term.mark = term.offset()
	return err
}

// wtShellPrompt starts the lines where `make shell`'s interactive Bash (PS1 "(turncli) \w\$ ")
// shows its prompt and, through readline, echoes what was typed after it, as on a terminal.
const wtShellPrompt = "(turncli) "

// typeAndWait types input, then a line that prints a marker with its exit status: whichever
// Bash reads it (the session's own, or `make shell`'s inside it) runs it after the command.
// The command's output is what the terminal printed between the previous marker and this one
// (so it holds the prompt Bash printed before reading the command, whenever that arrived), in
// lines, without the prompt lines of `make shell`'s Bash.
func (term *wtTerminal) typeAndWait(step int, input string, patience time.Duration) ([]string, int, error) {
	marker := fmt.Sprintf("@@walkthrough-step-%d", step)
	if _, err := fmt.Fprintf(term.stdin, "%s\nprintf '\\n%s %%d\\n' $?\n", input, marker); err != nil {
		return nil, 0, err
	}
	end := regexp.MustCompile(`\n` + marker + ` (\d+)\n`)
	from := term.mark
	var m []int
	_, out, err := term.await(from, patience, func(out string) int {
		if m = end.FindStringSubmatchIndex(out); m != nil {
			return m[0]
		}
		return -1
	})
	if err != nil {
		return strings.Split(out, "\n"), 0, err
	}
	term.mark = from + m[1]
	code, _ := strconv.Atoi(out[m[2]:m[3]])
	var lines []string
	for line := range strings.SplitSeq(out[:m[0]], "\n") {
		if !strings.HasPrefix(line, wtShellPrompt) {
			lines = append(lines, strings.TrimSuffix(line, "\r"))
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, code, nil
}
