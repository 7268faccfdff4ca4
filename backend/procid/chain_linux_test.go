package procid

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildPosingAsParent is the attack of issue 9, item 6: a program the
// agent ran starts a background driver holding pipes to itself and then
// execs the genuine shim on them. The shim's parent is the agent, so a
// walk up the tree names the agent, while the driver holds the session.
// The origin must be the process that holds the shim's stdio, and the
// record must still say who started the shim.
func TestChildPosingAsParent(t *testing.T) {
	f := newFixture(t)
	a := f.startPoser(t, "driver")
	agentPID := a.cmd.Process.Pid
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.PID == agentPID {
		t.Fatalf("the record names the agent (pid %d) while its child's driver (pid %d) holds the shim's stdio", rec.PID, a.driverPID)
	}
	if rec.PID != a.driverPID {
		t.Fatalf("origin pid %d, want the driver %d that holds the shim's stdio", rec.PID, a.driverPID)
	}
	if rec.Stdio != StdioHeldNotParent {
		t.Errorf("stdio %q, want %q", rec.Stdio, StdioHeldNotParent)
	}
	if rec.ShimPID != a.shimPID || rec.ShimExePath != f.shimBin {
		t.Errorf("shim %d %q, want %d %q", rec.ShimPID, rec.ShimExePath, a.shimPID, f.shimBin)
	}
	checkShimParent(t, rec, agentPID, f.agentBin)
	// The driver was started by the shim's own pid (before the exec).
	if len(rec.Parents) < 2 || rec.Parents[0].PID != a.shimPID || rec.Parents[1].PID != agentPID {
		t.Errorf("driver's parents %v, want the shim %d then the agent %d", rec.Parents, a.shimPID, agentPID)
	}
	if err := in.Matches(rec); err != nil {
		t.Errorf("fresh record does not match: %v", err)
	}

	// Origin alone still names the process that started the shim, and
	// says it does not hold the shim's stdio.
	named, err := in.Origin(a.shimPID)
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	if named.PID != agentPID || named.Stdio != StdioNotHeld {
		t.Errorf("Origin = pid %d stdio %q, want the agent %d, %q", named.PID, named.Stdio, agentPID, StdioNotHeld)
	}
}

// checkShimParent: the record shows who started the shim, with its start
// time and command line, apart from the origin.
func checkShimParent(t *testing.T, rec *RunRecord, pid int, bin string) {
	t.Helper()
	info, err := readProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	p := rec.ShimParent
	if p.PID != pid || !p.StartTime.Equal(info.startTime) || p.CmdLine != bin || p.Name != filepath.Base(bin) {
		t.Errorf("shim parent %+v, want pid %d started %v running %q", p, pid, info.startTime, bin)
	}
	shim, err := readProc(rec.ShimPID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.ShimStartTime.Equal(shim.startTime) {
		t.Errorf("shim start %v, want %v", rec.ShimStartTime, shim.startTime)
	}
}

// TestPoserShimIsItsOwnOrigin: when no single process of this user can be
// named as holding the shim's stdio, the shim is its own origin; the
// process that started it gets nothing.
func TestPoserShimIsItsOwnOrigin(t *testing.T) {
	for _, mode := range []string{"nodriver", "twodrivers", "foreigndriver"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			if mode == "foreigndriver" {
				if os.Getuid() != 0 {
					t.Fatal("this case starts a driver as uid 65534 and needs root (CI runs as root)")
				}
				for _, p := range []string{filepath.Dir(f.dir), f.dir} {
					os.Chmod(p, 0o755)
				}
			}
			a := f.startPoser(t, mode)
			rec, err := NewInspector().Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			if rec.PID != a.shimPID || rec.ExePath != f.shimBin {
				t.Fatalf("origin pid %d (%s), want the shim %d itself (agent %d, driver %d)", rec.PID, rec.ExePath, a.shimPID, a.cmd.Process.Pid, a.driverPID)
			}
			if rec.Stdio != StdioNotHeld || rec.ShimPID != a.shimPID {
				t.Errorf("stdio %q shim %d, want %q and the shim %d", rec.Stdio, rec.ShimPID, StdioNotHeld, a.shimPID)
			}
			checkShimParent(t, rec, a.cmd.Process.Pid, f.agentBin)
		})
	}
}

// TestGenuineClients: the shim's stdio held by the agent as pipes (Go,
// Python), as socket pairs (Node's libuv) and through a forking shell
// (`sh -c`, npx): the agent is the origin every time.
func TestGenuineClients(t *testing.T) {
	for _, stdio := range []string{"pipe", "socket", "wrapped"} {
		t.Run(stdio, func(t *testing.T) {
			f := newFixture(t)
			a := f.start(t, "PROCID_STDIO="+stdio)
			agentPID := a.cmd.Process.Pid
			peer, err := CheckPeer(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			shimPID := peer.PID
			peer.Close()
			rec, err := NewInspector().Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			if rec.PID != agentPID || rec.ShimPID != shimPID {
				t.Fatalf("origin pid %d (shim %d), want the agent %d (shim %d)", rec.PID, rec.ShimPID, agentPID, shimPID)
			}
			if rec.Stdio != StdioHeld {
				t.Errorf("stdio %q, want %q", rec.Stdio, StdioHeld)
			}
			if stdio == "wrapped" {
				// The shell that started the shim is shown as its parent.
				if rec.ShimParent.PID == agentPID || rec.ShimParent.Name != "sh" {
					t.Errorf("shim parent %+v, want the wrapping shell", rec.ShimParent)
				}
				return
			}
			checkShimParent(t, rec, agentPID, f.agentBin)
		})
	}
}

// TestAgentInAnotherNetworkNamespace: an agent in a network namespace of
// its own (a container, `unshare -rn`, a sandbox) with the gateway outside.
// Over pipes, which no network namespace hides, it is the origin as
// anywhere. Over socket pairs (Node's libuv), the kernel names their other
// ends only inside that namespace: the shim is its own origin, so an
// approval lasts only while it runs, and the record says why
// (StdioOtherNetns) and names the agent as the shim's parent, where it
// used to read as a shim whose stdio nobody holds.
func TestAgentInAnotherNetworkNamespace(t *testing.T) {
	for _, stdio := range []string{"pipe", "socket"} {
		t.Run(stdio, func(t *testing.T) {
			f := newFixture(t)
			f.netns = true
			a := f.start(t, "PROCID_STDIO="+stdio)
			agentPID := a.cmd.Process.Pid
			theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", agentPID))
			ours, _ := os.Readlink("/proc/self/ns/net")
			if theirs == "" || theirs == ours {
				t.Fatalf("the agent's network namespace %q is not its own (ours %q)", theirs, ours)
			}
			rec, err := NewInspector().Identify(a.conn)
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			checkShimParent(t, rec, agentPID, f.agentBin)
			if stdio == "pipe" {
				if rec.PID != agentPID || rec.Stdio != StdioHeld {
					t.Fatalf("origin %d stdio %q, want the agent %d, %q", rec.PID, rec.Stdio, agentPID, StdioHeld)
				}
				return
			}
			if rec.PID != a.shimPID || rec.ExePath != f.shimBin || rec.Stdio != StdioOtherNetns {
				t.Fatalf("origin %d (%s) stdio %q, want the shim %d itself, %q", rec.PID, rec.ExePath, rec.Stdio, a.shimPID, StdioOtherNetns)
			}
		})
	}
}

// TestRecordClose: a record keeps the process open until Close, and
// Matches still answers (opening what it needs) after it.
func TestRecordClose(t *testing.T) {
	f := newFixture(t)
	a := f.startAgent(t)
	before := openFDs(t)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		t.Fatal(err)
	}
	if openFDs(t) <= before {
		t.Error("the record keeps nothing open")
	}
	rec.Close()
	rec.Close() // twice is harmless
	if got := openFDs(t); got != before {
		t.Errorf("%d descriptors open after Close, %d before Identify", got, before)
	}
	if err := in.Matches(rec); err != nil {
		t.Errorf("Matches after Close: %v", err)
	}
	a.cmd.Process.Kill()
	a.cmd.Wait()
	if err := in.Matches(rec); !errors.Is(err, ErrProcessGone) {
		t.Errorf("Matches after Close and exit = %v, want ErrProcessGone", err)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	names, err := readDirNames("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

func TestParseFDLink(t *testing.T) {
	for _, tt := range []struct {
		link, kind string
		ino        uint64
		ok         bool
	}{
		{"pipe:[123]", "pipe", 123, true},
		{"socket:[4026532]", "socket", 4026532, true},
		{"/dev/null", "", 0, false},
		{"anon_inode:[eventfd]", "", 0, false},
		{"pipe:[12", "", 0, false},
		{"/tmp/pipe:[1]", "", 0, false},
	} {
		kind, ino, ok := parseFDLink(tt.link)
		if kind != tt.kind || ino != tt.ino || ok != tt.ok {
			t.Errorf("parseFDLink(%q) = %q %d %v", tt.link, kind, ino, ok)
		}
	}
}

// FuzzParseDiagReply: whatever the netlink socket returns, the parser
// neither panics nor names a peer for another socket.
func FuzzParseDiagReply(f *testing.F) {
	ok := make([]byte, 40)
	ne := binary.NativeEndian
	ne.PutUint32(ok[0:], 40)
	ne.PutUint16(ok[4:], sockDiagByFamily)
	ok[16] = 1
	ne.PutUint32(ok[20:], 77)
	ne.PutUint16(ok[32:], 8)
	ne.PutUint16(ok[34:], unixDiagPeer)
	ne.PutUint32(ok[36:], 78)
	if peer, err := parseDiagReply(ok, 77); err != nil || peer != 78 {
		f.Fatalf("seed: %d %v", peer, err)
	}
	f.Add(ok)
	f.Add(ok[:20])
	f.Add([]byte(strings.Repeat("\xff", 64)))
	f.Fuzz(func(t *testing.T, b []byte) {
		peer, err := parseDiagReply(b, 77)
		if err == nil && (len(b) < 40 || ne.Uint32(b[20:]) != 77) {
			t.Fatalf("peer %d named from a reply about another socket", peer)
		}
	})
}
