//go:build linux

// Package nonroot gives a test a person who is not root: what users run
// (yett init, credential, serve, the app) must work for them, and the suite
// runs as root in CI, where a check that only root passes (a terminal owned
// by root, a file root may read) goes unnoticed.
//
// As root, Person creates a throwaway account with useradd (no password, a
// home of its own under the system's temp dir) and removes it, with its
// home, when the test ends. As anyone else, the person is the current user:
// the tests then already run as a person who is not root.
package nonroot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// User is the person a test runs commands as.
type User struct {
	Name     string
	UID, GID int
	// Home is theirs (0700), empty at the start, removed at the end.
	Home string
	// created: the account was made for this test (the runner is root).
	created bool
}

// Person returns a user who is not root, with an empty home of their own.
func Person(t testing.TB) *User {
	t.Helper()
	if os.Getuid() != 0 {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		home, err := os.MkdirTemp("", "yperson")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(home) })
		return &User{Name: u.Username, UID: os.Getuid(), GID: os.Getgid(), Home: home}
	}
	var b [4]byte
	rand.Read(b[:])
	name := "yett-t" + hex.EncodeToString(b[:])
	// Short: the gateway's socket path under it must fit in sun_path.
	home := filepath.Join(os.TempDir(), name)
	if out, err := exec.Command("useradd", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh",
		"--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		// Whatever the person still runs ends with the test.
		exec.Command("pkill", "-KILL", "-u", name).Run()
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v: %s", name, err, out)
		}
		os.RemoveAll(home)
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	return &User{Name: name, UID: uid, GID: gid, Home: home, created: true}
}

// Run makes cmd run as the person (nothing changes when the person is the
// current user). It keeps cmd's other SysProcAttr settings.
func (u *User) Run(cmd *exec.Cmd) {
	if !u.created {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}
}

// Install copies the executable at src into the person's home (bin/NAME,
// mode 0755, theirs) and returns its path: a test's own build lives in the
// runner's private temp dirs, which another account cannot reach.
func (u *User) Install(t testing.TB, src, name string) string {
	t.Helper()
	dir := filepath.Join(u.Home, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	u.chown(t, dir, dst)
	return dst
}

// Dir makes dir (and its parents below Home) the person's, mode 0700.
func (u *User) Dir(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(u.Home, rel)
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	u.chown(t, p)
	return p
}

func (u *User) chown(t testing.TB, paths ...string) {
	t.Helper()
	if !u.created {
		return
	}
	for _, p := range paths {
		if err := os.Chown(p, u.UID, u.GID); err != nil {
			t.Fatal(err)
		}
	}
}

// SetPassword gives the person a password PAM checks (polkit's agent
// helper asks for it). It needs the account to have been made for the
// test: the runner's own password is never changed.
func (u *User) SetPassword(t testing.TB, password string) {
	t.Helper()
	if !u.created {
		t.Fatal("nonroot: a password is set only on an account made for the test (run as root)")
	}
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(u.Name + ":" + password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v: %s", err, out)
	}
}

func (u *User) String() string { return fmt.Sprintf("%s (uid %d)", u.Name, u.UID) }
