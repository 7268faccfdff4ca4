package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// openPassphrasePTY opens a real pseudo-terminal pair from /dev/ptmx.
func openPassphrasePTY(t *testing.T) (master *os.File, slavePath string) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	master = os.NewFile(uintptr(fd), "ptmx")
	t.Cleanup(func() { master.Close() })
	return master, "/dev/pts/" + strconv.Itoa(n)
}

// The real terminal reader: it prompts on the terminal, reads one line with
// echo off (the passphrase never appears on the screen) and works end to end
// through `yett audit show`.
func TestTTYPassphraseOverARealPTY(t *testing.T) {
	dataDir, _ := vaultWithLog(t)
	master, slave := openPassphrasePTY(t)
	usePassphrases(t, ttyPassphrase{path: slave})

	var screen syncbuf.Buffer // what the terminal shows
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(screen.String(), "Vault passphrase: ") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		master.Write([]byte(vaultTestPass + "\r"))
	}()

	out, errOut, code := runYett(t, dataDir, "audit", "show")
	if code != 0 {
		t.Fatalf("exit %d: %s (terminal showed %q)", code, errOut, screen.String())
	}
	if !strings.Contains(out, `"type":"action_denied"`) {
		t.Fatalf("events not shown: %s", out)
	}
	time.Sleep(50 * time.Millisecond) // let the reader drain the newline
	if s := screen.String(); strings.Contains(s, vaultTestPass) {
		t.Fatalf("the passphrase was echoed on the terminal: %q", s)
	}
}
