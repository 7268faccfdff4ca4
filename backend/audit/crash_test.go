//go:build linux

package audit

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"filippo.io/age"
)

// The crash test re-executes the test binary as a writer that prints every
// index Append acknowledged to stdout, and kills it with SIGKILL at chosen
// points: after some number of acknowledgements (from outside), halfway
// through a record's bytes, between the steps of a checkpoint or of a
// torn-tail repair, and around a segment-key record (written, durable, before
// any entry is sealed under it) (from inside, at the exact step). After each
// kill the log must verify, report any torn tail, reopen, hold every
// acknowledged index as an event, and every event must decrypt: no entry is
// ever left without the key record of its segment before it.

const crashEnv = "YETT_AUDIT_CRASH_CHILD"

// maybeCrashChild turns the test binary into the crash test's writer.
func maybeCrashChild() {
	if spec := os.Getenv(crashEnv); spec != "" {
		crashChild(spec)
		os.Exit(0)
	}
}

// crashChild runs the writer. spec is "dir|point|n": point is "none" (wait
// for the parent's SIGKILL), "torn" (write half of record n, then die) or a
// crash point name (die the n-th time it is reached).
func crashChild(spec string) {
	parts := strings.Split(spec, "|")
	dir, point := parts[0], parts[1]
	n, _ := strconv.Atoi(parts[2])
	die := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	var mu sync.Mutex
	count := 0
	opts := Options{Dir: dir, Recipient: mustIdentity().Recipient(), CheckpointEvery: 7}
	switch point {
	case "torn":
		opts.wrap = func(f logFile) logFile { return &tearingFile{f: f, after: n, die: die} }
	case "none":
	default:
		opts.crashPoint = func(name string) {
			mu.Lock()
			defer mu.Unlock()
			if name == point {
				if count++; count >= n {
					die()
				}
			}
		}
	}
	l, _, err := Open(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				idx, err := l.Append(context.Background(), sampleEvent(w*1000+i))
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(4)
				}
				outMu.Lock()
				fmt.Fprintln(out, idx)
				out.Flush() // the ack reaches the parent before the next append
				outMu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func mustIdentity() *age.X25519Identity {
	id, err := age.ParseX25519Identity(testIdentity)
	if err != nil {
		panic(err)
	}
	return id
}

// tearingFile writes the first half of record number after, then dies.
type tearingFile struct {
	f     logFile
	after int
	n     int
	die   func()
}

func (t *tearingFile) Write(b []byte) (int, error) {
	if t.n++; t.n > t.after {
		t.f.Write(b[:len(b)/2])
		t.die()
	}
	return t.f.Write(b)
}

func (t *tearingFile) Sync() error { return t.f.Sync() }

func TestCrashKill9(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[int64]bool{}
	points := []string{"none", "torn", "torn-saved", "checkpoint-file", "checkpoint-record", "segment-key-written", "segment-key-durable"}
	for round := range 35 {
		point := points[round%len(points)]
		n := 1 + rng.IntN(40)
		switch point {
		case "torn-saved":
			n = 1
		case "checkpoint-file", "checkpoint-record", "segment-key-written", "segment-key-durable":
			n = 1 + rng.IntN(6)
		}
		got, stderr := runCrashChild(t, dir, point, n, rng)
		for _, idx := range got {
			acked[idx] = true
		}
		rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{})
		if rep.Status != StatusIntact {
			t.Fatalf("round %d (%s %d): verify %v: %v\nchild: %s", round, point, n, rep.Status, rep.Err, stderr)
		}
		if point == "torn" && rep.Torn == nil {
			t.Fatalf("round %d: half-written record not reported as torn", round)
		}
		if strings.HasPrefix(point, "segment-key") {
			// The writer died right after a segment-key record, before any
			// entry was sealed under its key: the log ends with it.
			if k := kinds(t, dir); k[len(k)-1] != KindSegmentKey {
				t.Fatalf("round %d (%s %d): log ends with %q, not the segment key", round, point, n, k[len(k)-1])
			}
		}
		events := map[int64]bool{}
		for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
			if err != nil {
				t.Fatalf("round %d: read: %v", round, err)
			}
			events[e.Index] = true
		}
		for idx := range acked {
			if !events[idx] {
				t.Fatalf("round %d (%s %d): acknowledged entry %d is missing", round, point, n, idx)
			}
		}
	}
	// The last round may have left a torn tail; the writer repairs it and
	// records the repair.
	l, orep, err := Open(Options{Dir: dir, Recipient: identity(t).Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact || rep.Torn != nil {
		t.Fatalf("after repair: %v torn %+v: %v", rep.Status, rep.Torn, rep.Err)
	}
	_ = orep
	recovered := 0
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type == EventAuditRecovered {
			recovered++
			saved := filepath.Join(dir, e.Event.Recovery.SavedAs)
			if b := mustRead(t, saved); int64(len(b)) != e.Event.Recovery.Length || sha256Hex(b) != e.Event.Recovery.SHA256 {
				t.Fatalf("saved torn bytes %s do not match the recorded recovery", saved)
			}
		}
	}
	if recovered == 0 {
		t.Fatal("no audit_recovered event after torn tails")
	}
	t.Logf("%d acknowledged entries survived 35 kills, %d repairs recorded", len(acked), recovered)
}

// runCrashChild runs one writer until it dies and returns the acked indexes.
func runCrashChild(t *testing.T, dir, point string, n int, rng *rand.Rand) ([]int64, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", crashEnv, dir, point, n))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []int64
	killAfter := 1 + rng.IntN(60)
	if point != "none" {
		killAfter = 500 // safety net: the child kills itself long before
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		idx, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			t.Fatalf("child said %q", sc.Text())
		}
		acked = append(acked, idx)
		if len(acked) == killAfter {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	err = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v\n%s", err, stderr.String())
	}
	return acked, stderr.String()
}
