package procid

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestIdentifyFindsAgent(t *testing.T) {
	for _, noPidfd := range []bool{false, true} {
		t.Run(map[bool]string{false: "SO_PEERPIDFD", true: "fallback"}[noPidfd], func(t *testing.T) {
			forceNoPeerPIDFD = noPidfd
			defer func() { forceNoPeerPIDFD = false }()
			f := newFixture(t)
			a := f.startAgent(t)

			peer, err := CheckPeer(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			if peer.PID != a.shimPID || peer.UID != os.Getuid() {
				t.Errorf("peer = pid %d uid %d, want shim %d uid %d", peer.PID, peer.UID, a.shimPID, os.Getuid())
			}
			if want := !noPidfd && kernelHasPeerPIDFD(t); peer.HasPIDFD() != want {
				t.Errorf("HasPIDFD = %v, want %v (fallback forced: %v)", peer.HasPIDFD(), want, noPidfd)
			}
			if !peer.StillSame() {
				t.Error("live peer reported changed")
			}
			peer.Close()

			rec, err := NewInspector().Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			if rec.PID != a.cmd.Process.Pid || rec.ShimPID != a.shimPID {
				t.Fatalf("origin pid %d (shim %d), want agent %d (shim %d)", rec.PID, rec.ShimPID, a.cmd.Process.Pid, a.shimPID)
			}
			if rec.ShimExePath != f.shimBin || rec.ShimExeSHA256 != fileSHA256(t, f.shimBin) {
				t.Errorf("shim exe %q not recorded with its hash", rec.ShimExePath)
			}
			if rec.ExeSHA256 != fileSHA256(t, f.agentBin) {
				t.Error("exe hash differs from the agent binary's SHA-256")
			}
			if rec.ExePath != f.agentBin {
				t.Errorf("exe path %q, want %q", rec.ExePath, f.agentBin)
			}
			if rec.PPID != os.Getpid() || len(rec.Parents) == 0 || rec.Parents[0].PID != os.Getpid() {
				t.Errorf("parent %d / chain %v, want this test process %d first", rec.PPID, rec.Parents, os.Getpid())
			}
			if rec.Signer != SignerUnsigned || rec.Name != "agent" || !strings.HasSuffix(rec.CmdLine, "agent") {
				t.Errorf("signer %q name %q cmdline %q", rec.Signer, rec.Name, rec.CmdLine)
			}
			if d := time.Since(rec.StartTime); d < 0 || d > time.Minute {
				t.Errorf("start time %v is not just before now", rec.StartTime)
			}
			if want := bootInstant().Add(time.Duration(rec.StartKey) * 10 * time.Millisecond); !rec.StartTime.Equal(want) {
				t.Errorf("start time %v, want boot instant + starttime ticks = %v", rec.StartTime, want)
			}
			if err := NewInspector().Matches(rec); err != nil {
				t.Errorf("fresh record does not match: %v", err)
			}
		})
	}
}

func TestStartTimeMatchesKernel(t *testing.T) {
	// The test process's own start stamp, read independently of readProc.
	info, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("/proc/self/stat")
	got, err := parseStat(os.Getpid(), data)
	if err != nil || got.startKey != info.startKey {
		t.Fatalf("parseStat %v %v", got, err)
	}
	// A command name with ") " inside must not shift the fields.
	fake := []byte("42 (evil) 1 2 3) S 7 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 12345 0 0")
	p, err := parseStat(42, fake)
	if err != nil || p.ppid != 7 || p.startKey != 12345 {
		t.Fatalf("parseStat(%q) = %+v, %v", fake, p, err)
	}
}

func TestIdenticalAgentsGetDistinctRecords(t *testing.T) {
	f := newFixture(t)
	a1, a2 := f.startAgent(t), f.startAgent(t)
	in := NewInspector()
	r1, err := in.Identify(a1.conn)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := in.Identify(a2.conn)
	if err != nil {
		t.Fatal(err)
	}
	r1again, err := in.Identify(a1.conn)
	if err != nil {
		t.Fatal(err)
	}
	if r1.ExeSHA256 != r2.ExeSHA256 {
		t.Fatal("same binary, different hashes")
	}
	if r1.PID == r2.PID || r1.LaunchNonce == r2.LaunchNonce {
		t.Errorf("two agents share pid or nonce: %v %v", r1, r2)
	}
	if r1again.LaunchNonce == r1.LaunchNonce {
		t.Error("re-inspection reused the launch nonce")
	}
	if r1again.PID != r1.PID || r1again.StartKey != r1.StartKey {
		t.Error("same process inspected twice gave different identities")
	}
}

func TestWatchExitOnKill(t *testing.T) {
	for _, noPidfd := range []bool{false, true} {
		t.Run(map[bool]string{false: "pidfd", true: "proc-poll"}[noPidfd], func(t *testing.T) {
			forceNoPidfdOpen = noPidfd
			defer func() { forceNoPidfdOpen = false }()
			f := newFixture(t)
			a := f.startAgent(t)
			rec, err := NewInspector().Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			exited := WatchExit(context.Background(), rec)
			select {
			case <-exited:
				t.Fatal("WatchExit closed while the agent runs")
			case <-time.After(200 * time.Millisecond):
			}
			a.cmd.Process.Kill()
			a.cmd.Wait() // reap, as the agent's real parent would
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatal("WatchExit did not close after the agent was killed")
			}
			if err := NewInspector().Matches(rec); !errors.Is(err, ErrProcessGone) {
				t.Errorf("Matches after exit = %v, want ErrProcessGone", err)
			}
		})
	}
}

func TestWatchExitZombie(t *testing.T) {
	// Killed but not yet reaped: the run is over all the same.
	f := newFixture(t)
	a := f.startAgent(t)
	rec, err := NewInspector().Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	exited := WatchExit(context.Background(), rec)
	a.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("WatchExit did not close for an unreaped agent")
	}
}

func TestWatchExitCancel(t *testing.T) {
	f := newFixture(t)
	a := f.startAgent(t)
	rec, err := NewInspector().Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := WatchExit(ctx, rec)
	cancel()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("WatchExit ignored cancellation")
	}
	if ctx.Err() == nil {
		t.Fatal("unreachable")
	}
}

func TestExecedOriginNoLongerMatches(t *testing.T) {
	f := newFixture(t)
	a := f.startAgent(t)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	exited := WatchExit(context.Background(), rec)
	if _, err := a.stdin.Write([]byte("exec\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "agent to exec /bin/sleep", func() bool {
		p, _ := os.Readlink("/proc/" + itoa(rec.PID) + "/exe")
		return strings.Contains(p, "sleep")
	})
	if err := in.Matches(rec); !errors.Is(err, ErrExeChanged) {
		t.Fatalf("Matches after execve = %v, want ErrExeChanged", err)
	}
	select {
	case <-exited:
		t.Error("WatchExit closed on exec; the process still runs")
	default:
	}
}

func TestMatchesDetects(t *testing.T) {
	f := newFixture(t)
	a := f.startAgent(t)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("pid reuse", func(t *testing.T) {
		other := *rec
		other.StartKey++ // what a new process with the same pid would show
		if err := in.Matches(&other); !errors.Is(err, ErrPIDReused) {
			t.Fatalf("got %v, want ErrPIDReused", err)
		}
	})
	t.Run("other file same content", func(t *testing.T) {
		other := *rec
		other.ExeID.Ino++
		if err := in.Matches(&other); !errors.Is(err, ErrExeChanged) {
			t.Fatalf("got %v, want ErrExeChanged", err)
		}
	})
}

// What package managers, backup tools and touch do to an executable while
// it runs: the inode's ctime, link count, mode or times move, or another
// file (the same version or another) is put at its path. The running image
// is what the run was inspected with, and it has not changed: none of this
// ends a run (issue 19, item 2: a hard link to /usr/bin/node stopped every
// approved node agent, with no card).
func TestMetadataChangesKeepTheRun(t *testing.T) {
	changes := []struct {
		name string
		do   func(t *testing.T, bin string)
	}{
		{"hard link added", func(t *testing.T, bin string) {
			if err := os.Link(bin, bin+".backup"); err != nil {
				t.Fatal(err)
			}
		}},
		{"hard link added and removed", func(t *testing.T, bin string) {
			if err := os.Link(bin, bin+".tmp"); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(bin + ".tmp"); err != nil {
				t.Fatal(err)
			}
		}},
		{"mode changed", func(t *testing.T, bin string) {
			if err := os.Chmod(bin, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"touched", func(t *testing.T, bin string) {
			now := time.Now().Add(time.Hour)
			if err := os.Chtimes(bin, now, now); err != nil {
				t.Fatal(err)
			}
		}},
		{"same version installed again", func(t *testing.T, bin string) {
			tmp := bin + ".dpkg-new"
			copyExe(t, tmp)
			if err := os.Rename(tmp, bin); err != nil {
				t.Fatal(err)
			}
		}},
		// The process still runs the image it was inspected with: a new
		// process started from the new file is another run.
		{"another version installed", func(t *testing.T, bin string) {
			tmp := bin + ".dpkg-new"
			copyExe(t, tmp)
			appendByte(t, tmp)
			if err := os.Rename(tmp, bin); err != nil {
				t.Fatal(err)
			}
		}},
		{"file removed", func(t *testing.T, bin string) {
			if err := os.Remove(bin); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			a := f.startAgent(t)
			in := NewInspector()
			rec, err := in.Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			c.do(t, f.agentBin)
			for i := range 2 { // the second check takes the cached hash
				if err := in.Matches(rec); err != nil {
					t.Fatalf("check %d after %s: %v, want a match (the program did not change)", i+1, c.name, err)
				}
			}
		})
	}
}

func appendByte(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestForeignUserRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatal("this test starts a peer as uid 65534 and needs root (CI runs as root)")
	}
	f := newFixture(t)
	// nobody must be able to run the binary and reach the socket.
	for _, p := range []string{filepath.Dir(f.dir), f.dir, f.ln.Addr().String()} {
		os.Chmod(p, 0o777)
	}
	cmd := exec.Command(f.shimBin)
	cmd.Env = append(os.Environ(), "PROCID_ROLE=shim", "PROCID_SOCK="+f.ln.Addr().String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	f.ln.SetDeadline(time.Now().Add(30 * time.Second))
	conn, err := f.ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := CheckPeer(conn); !errors.Is(err, ErrForeignUser) {
		t.Fatalf("CheckPeer = %v, want ErrForeignUser", err)
	}
	if _, err := NewInspector().Identify(conn); !errors.Is(err, ErrForeignUser) {
		t.Fatalf("Identify = %v, want ErrForeignUser", err)
	}
}

func TestNoOriginAboveInit(t *testing.T) {
	// A shim whose parent is pid 1 has no agent to approve.
	if _, err := NewInspector().Origin(1); !errors.Is(err, ErrNoOrigin) {
		t.Fatalf("Origin(1) = %v, want ErrNoOrigin", err)
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"claude --resume", "claude --resume"},
		{"a\x1b[31mred\x07", "a?[31mred?"},
		{"bidi\u202egnp.exe", "bidi?gnp.exe"},
		{strings.Repeat("x", 600), strings.Repeat("x", maxCmdLine) + "…"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in, maxCmdLine); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := displayCmdLine([]string{"node", "my script.js", ""}); got != `node "my script.js" ""` {
		t.Errorf("displayCmdLine = %q", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// kernelHasPeerPIDFD asks the kernel directly, on a socket pair, whether it
// knows SO_PEERPIDFD (Linux 6.5+), so the test expects the right path.
func kernelHasPeerPIDFD(t *testing.T) bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	pfd, err := unix.GetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	if err != nil {
		return false
	}
	unix.Close(pfd)
	return true
}
