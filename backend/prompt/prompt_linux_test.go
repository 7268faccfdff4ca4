package prompt

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/ptytest"
)

// TestOpenRefuses: a pipe, and a terminal that is not this process's
// controlling terminal, are not a person at the terminal. (The test
// binary's own session has no controlling terminal; cmd/yett's tests run
// the commands on one.)
func TestOpenRefuses(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := Open(r); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("a pipe: %v", err)
	}
	if _, err := Open(nil); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("no stdin: %v", err)
	}
	_, slave := ptytest.Open(t)
	if _, err := Open(slave); !errors.Is(err, ErrNoTerminal) {
		t.Errorf("a terminal that is not the controlling one: %v", err)
	}
}

// fdWith opens a pipe holding content and returns its read end's number.
func fdWith(t *testing.T, content string) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(content); w.Close() }()
	return int(r.Fd())
}

func TestReadFD(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"s3cret\n", "s3cret"}, {"s3cret\r\n", "s3cret"}, {"s3cret", "s3cret"}, {"two\nlines\n", "two\nlines"}, {"", ""},
	} {
		got, err := ReadFD(fdWith(t, c.in), 64)
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	if _, err := ReadFD(fdWith(t, strings.Repeat("x", 65)+"\n"), 64); !errors.Is(err, ErrTooLong) {
		t.Errorf("65 bytes with a limit of 64: %v", err)
	}
	if got, err := ReadFD(fdWith(t, strings.Repeat("x", 64)+"\n"), 64); err != nil || len(got) != 64 {
		t.Errorf("64 bytes and a newline: %d %v", len(got), err)
	}
	for _, fd := range []int{0, 1, 2} {
		if _, err := ReadFD(fd, 64); err == nil || !strings.Contains(err.Error(), "3 or more") {
			t.Errorf("fd %d: %v", fd, err)
		}
	}
	if _, err := ReadFD(987, 64); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Errorf("a closed fd: %v", err)
	}
}
