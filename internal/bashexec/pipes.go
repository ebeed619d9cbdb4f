package bashexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// pipes holds the command's standard streams: the ends the child inherits (closed by Run right
// after start) and the ends Run reads from and writes to.
type pipes struct {
	childStdin               io.Reader // nil (/dev/null), the caller's *os.File, or stdinR
	childStdout, childStderr *os.File

	stdinR, stdinW   *os.File // only when a non-file Stdin is copied
	stdoutR, stderrR *os.File
}

func openPipes(stdin io.Reader) (*pipes, error) {
	p := &pipes{}
	var err error
	if p.stdoutR, p.childStdout, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("bashexec: stdout pipe: %w", err)
	}
	if p.stderrR, p.childStderr, err = os.Pipe(); err != nil {
		p.closeChild()
		p.closeParent()
		return nil, fmt.Errorf("bashexec: stderr pipe: %w", err)
	}
	switch in := stdin.(type) {
	case nil:
	case *os.File:
		if in != nil {
			p.childStdin = in
		}
	default:
		if p.stdinR, p.stdinW, err = os.Pipe(); err != nil {
			p.closeChild()
			p.closeParent()
			return nil, fmt.Errorf("bashexec: stdin pipe: %w", err)
		}
		p.childStdin = p.stdinR
	}
	return p, nil
}

// giveTo makes the pipes' inodes the shell user's, so the command may open its own streams
// again by name (/dev/stdout, /dev/stderr and /proc/self/fd/N are the pipes themselves), as it
// could in a terminal. Only the reading ends' holder, this process, can reach the other end.
func (p *pipes) giveTo(uid, gid uint32) error {
	for _, f := range []*os.File{p.stdinR, p.childStdout, p.childStderr} {
		if f == nil {
			continue
		}
		if err := f.Chown(int(uid), int(gid)); err != nil {
			return fmt.Errorf("bashexec: give the shell its streams: %w", err)
		}
	}
	return nil
}

// closeChild closes the parent's copies of the child's ends.
func (p *pipes) closeChild() {
	closeAll(p.stdinR, p.childStdout, p.childStderr)
}

// closeParent closes the ends Run uses.
func (p *pipes) closeParent() {
	closeAll(p.stdinW, p.stdoutR, p.stderrR)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// startCopying starts one goroutine per output stream, and one for stdin when it is copied.
// They stop at end of file, or once finish has been called; wg tracks them.
func (p *pipes) startCopying(wg *sync.WaitGroup, stdin io.Reader, out Output) {
	d := &deliverer{out: out}
	wg.Go(func() { pump(p.stdoutR, Stdout, d) })
	wg.Go(func() { pump(p.stderrR, Stderr, d) })
	if p.stdinW != nil {
		w := p.stdinW
		wg.Go(func() {
			_, _ = io.Copy(w, stdin) // EPIPE when the process stops reading is expected
			_ = w.Close()
		})
	}
}

// finish is called once the process group is gone. It stops the stdin copy and gives the output
// pumps until now+wait to reach end of file; after that they deliver only what is buffered.
func (p *pipes) finish(wait time.Duration) {
	if p.stdinW != nil {
		_ = p.stdinW.Close() // unblocks a Write; a blocked Read of Spec.Stdin is the caller's
	}
	deadline := time.Now().Add(wait)
	// Pipes from os.Pipe are always pollable on Linux, so setting a deadline cannot fail.
	_ = p.stdoutR.SetReadDeadline(deadline)
	_ = p.stderrR.SetReadDeadline(deadline)
}

// deliverer serialises calls to Output.
type deliverer struct {
	mu  sync.Mutex
	out Output
}

func (d *deliverer) deliver(s Stream, chunk []byte) {
	if d.out == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.out(s, chunk)
}

// pump delivers r in chunks until end of file. When the read deadline set by finish passes, it
// stops waiting for writers and delivers only what the pipe already holds. The deadline is
// checked only while pump reads, so time spent in a slow Output never loses buffered output.
func pump(r *os.File, s Stream, d *deliverer) {
	buf := make([]byte, ChunkSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			d.deliver(s, buf[:n])
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			drainBuffered(r, s, buf, d)
			return
		default: // io.EOF, or an error after which nothing more can be read
			return
		}
	}
}

// drainBuffered delivers what r holds right now, up to maxDrain bytes, without waiting for more.
func drainBuffered(r *os.File, s Stream, buf []byte, d *deliverer) {
	if r.SetReadDeadline(time.Time{}) != nil {
		return
	}
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	for total := 0; total < maxDrain; {
		var n int
		var rerr error
		// Returning true makes this a single non-blocking read(2): the read end of an os.Pipe is
		// in non-blocking mode, so an empty pipe answers EAGAIN instead of waiting for a writer.
		err := rc.Read(func(fd uintptr) bool {
			for {
				n, rerr = syscall.Read(int(fd), buf)
				if !errors.Is(rerr, syscall.EINTR) {
					return true
				}
			}
		})
		if err != nil || rerr != nil || n <= 0 { // EAGAIN: empty; 0: end of file
			return
		}
		d.deliver(s, buf[:n])
		total += n
	}
}
