//go:build unix

package prompt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ttyPath is the controlling terminal; a constant, so no flag or variable
// points the prompts elsewhere.
const ttyPath = "/dev/tty"

// maxLine bounds one line typed at a prompt.
const maxLine = 64 << 10

// Terminal is the controlling terminal of a setup command. Its methods are
// for one goroutine.
type Terminal struct {
	tty *os.File
	// restore puts the terminal's settings back when a secret prompt was
	// interrupted; nil when echo is on.
	mu      sync.Mutex
	restore *unix.Termios
}

// Open checks that stdin is the invoking user's controlling terminal and
// opens that terminal for prompts. Errors: ErrNoTerminal.
func Open(stdin *os.File) (*Terminal, error) {
	if stdin == nil {
		return nil, ErrNoTerminal
	}
	fd := int(stdin.Fd())
	if err := checkControlling(fd); err != nil {
		return nil, err
	}
	// The terminal itself (the pty or console device stdin is) belongs to
	// the real user id: sudo keeps the person's terminal, which is not
	// root's, and another user's session is refused.
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || int(st.Uid) != os.Getuid() {
		return nil, ErrNoTerminal
	}
	tty, err := os.OpenFile(ttyPath, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, ErrNoTerminal
	}
	// /dev/tty is a device node of its own (root's, mode 0666) that the
	// kernel connects to the caller's controlling terminal, so its owner
	// says nothing about the person: checking it refused every user who is
	// not root. A process has one controlling terminal, and both handles
	// are it, so the owner checked on stdin is this terminal's.
	if err := checkControlling(int(tty.Fd())); err != nil {
		tty.Close()
		return nil, err
	}
	return &Terminal{tty: tty}, nil
}

// Attach makes prompts on tty, a controlling terminal its caller opened and
// keeps (yett serve holds /dev/tty for its whole run). Do not Close the
// Terminal: the caller closes tty.
func Attach(tty *os.File) *Terminal { return &Terminal{tty: tty} }

// checkControlling: fd is a terminal, and the controlling terminal of this
// process (TIOCGPGRP fails with ENOTTY for any other).
func checkControlling(fd int) error {
	if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err != nil {
		return ErrNoTerminal
	}
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil {
		return ErrNoTerminal
	}
	return nil
}

// Close closes the terminal, putting back its settings if a prompt was cut.
func (t *Terminal) Close() error {
	t.putBack()
	return t.tty.Close()
}

// Printf writes to the terminal (not to standard output).
func (t *Terminal) Printf(format string, a ...any) {
	fmt.Fprintf(t.tty, format, a...)
}

// Writer is the terminal, for text that belongs with the prompts.
func (t *Terminal) Writer() io.Writer { return t.tty }

// Line shows prompt and reads one line, echoed, without its line ending.
func (t *Terminal) Line(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(t.tty, prompt)
	b, err := t.readLine(ctx)
	return strings.TrimSpace(string(b)), err
}

// Confirm asks a yes/no question; only "y" or "yes" is yes.
func (t *Terminal) Confirm(ctx context.Context, prompt string) (bool, error) {
	s, err := t.Line(ctx, prompt+" [y/N] ")
	if err != nil {
		return false, err
	}
	s = strings.ToLower(s)
	return s == "y" || s == "yes", nil
}

// Secret shows prompt with echo off and reads one line. The caller owns
// (and wipes) the bytes.
func (t *Terminal) Secret(ctx context.Context, prompt string) ([]byte, error) {
	fd := int(t.tty.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, ErrNoTerminal
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	// Echo goes off before the prompt shows: a person who types at the
	// prompt at once never sees (nor leaves on screen) a character.
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, ErrNoTerminal
	}
	t.mu.Lock()
	t.restore = old
	t.mu.Unlock()
	fmt.Fprint(t.tty, prompt)
	b, err := t.readLine(ctx)
	t.putBack()
	fmt.Fprintln(t.tty)
	return b, err
}

func (t *Terminal) putBack() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.restore != nil {
		unix.IoctlSetTermios(int(t.tty.Fd()), ioctlSetTermios, t.restore)
		t.restore = nil
	}
}

// readLine reads one byte at a time, so nothing typed after the line is
// taken from the terminal for a later prompt. A cancelled ctx (Ctrl-C in
// main) returns ErrInterrupted; the read left behind ends with the process.
func (t *Terminal) readLine(ctx context.Context) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var line []byte
		var c [1]byte
		for {
			n, err := t.tty.Read(c[:])
			if n == 1 {
				if c[0] == '\n' {
					done <- result{b: bytes.TrimSuffix(line, []byte{'\r'})}
					return
				}
				if len(line) >= maxLine {
					clear(line)
					done <- result{err: ErrTooLong}
					return
				}
				line = append(line, c[0])
			}
			if err != nil || n == 0 {
				clear(line)
				done <- result{err: ErrInterrupted} // end of input: nobody is typing
				return
			}
		}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, ErrInterrupted
	}
}

// ReadFD reads a secret from the file descriptor the person named, up to
// max bytes, and drops one trailing line ending. The descriptor is closed.
// Errors: ErrTooLong, or one saying the descriptor is not open.
func ReadFD(fd int, max int) ([]byte, error) {
	if fd < 3 {
		return nil, errors.New("name a descriptor of its own (3 or more), not standard input, output or error")
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil, fmt.Errorf("file descriptor %d is not open (run it as: yett ... --secret-fd %d %d<file)", fd, fd, fd)
	}
	f := os.NewFile(uintptr(fd), "secret")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+2))
	if err != nil {
		clear(b)
		return nil, fmt.Errorf("reading file descriptor %d failed", fd)
	}
	trimmed := bytes.TrimSuffix(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\r'})
	if len(trimmed) > max {
		clear(b)
		return nil, ErrTooLong
	}
	out := append([]byte(nil), trimmed...)
	clear(b)
	return out, nil
}
