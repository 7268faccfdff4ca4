package journal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("YETT_JOURNAL_CRASH") != "" {
		crashHelper(os.Getenv("YETT_JOURNAL_CRASH"))
		return
	}
	if os.Getenv("YETT_JOURNAL_CARRY") != "" {
		carryHelper(os.Getenv("YETT_JOURNAL_CARRY"))
		return
	}
	if os.Getenv("YETT_JOURNAL_SOON") != "" {
		soonHelper(os.Getenv("YETT_JOURNAL_SOON"))
		return
	}
	os.Exit(m.Run())
}

// crashHelper writes calls from 16 goroutines and, at its third fsync,
// says "leader" and freezes with the frames written and not synced, the
// other writers waiting on it, until the test kills it.
func crashHelper(path string) {
	j, err := Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	syncs := 0
	j.wal.hookBeforeSync = func() {
		mu.Lock()
		syncs++
		n := syncs
		mu.Unlock()
		if n == 3 {
			time.Sleep(50 * time.Millisecond) // let followers queue up behind the leader
			fmt.Println("leader")
			select {}
		}
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("q-%d-%d", g, i)
				if _, err := j.Dispatch(context.Background(), intent(id, "k-"+id, "B1")); err != nil {
					return
				}
				out.Lock()
				fmt.Println("acked " + id)
				out.Unlock()
				if err := j.Finish(context.Background(), id, Result{Status: 200}); err != nil {
					return
				}
				out.Lock()
				fmt.Println("finished " + id)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestKilledWhileLeadingAGroupCommit: the process is killed with SIGKILL
// while one writer syncs a group and others wait on it. Reopened, the
// journal holds every write that was acknowledged, in the state it was
// acknowledged in or later, and opens cleanly whatever the log's end holds.
func TestKilledWhileLeadingAGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	acked, finished := map[string]bool{}, map[string]bool{}
	killAtLeader(t, "YETT_JOURNAL_CRASH="+path, func(l string) bool {
		switch {
		case strings.HasPrefix(l, "acked "):
			acked[strings.TrimPrefix(l, "acked ")] = true
		case strings.HasPrefix(l, "finished "):
			finished[strings.TrimPrefix(l, "finished ")] = true
		default:
			return false
		}
		return true
	})
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged before the kill")
	}

	j, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer j.Close()
	for id := range acked {
		e, err := j.Lookup(context.Background(), "sha256:aa", "k-"+id)
		if err != nil {
			t.Fatalf("acknowledged %s lost: %v", id, err)
		}
		if finished[id] && e.State != StateResult {
			t.Fatalf("acknowledged result of %s lost: %+v", id, e)
		}
	}
	// The journal goes on after the crash.
	if _, err := j.Dispatch(context.Background(), intent("after", "k-after", "B2")); err != nil {
		t.Fatal(err)
	}
}

// killAtLeader runs the test binary as the helper env names, hands each
// line it prints to line (false: an unexpected line, which fails the test)
// until it says "leader" (frozen in a group commit), and kills it there
// with SIGKILL.
func killAtLeader(t *testing.T, env string, line func(string) bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGKILL)
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "leader" {
				done <- nil
				return
			}
			if !line(sc.Text()) {
				done <- errors.New(sc.Text())
				return
			}
		}
		done <- errors.New("the helper ended without leading a group")
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the helper never froze in a group commit")
	}
}

// TestTornLogTail: bytes of a record cut short at the log's end (what a
// crash mid-write leaves) are cut off at Open; every whole record before
// them is kept.
func TestTornLogTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j.Dispatch(ctx, intent("q1", "k1", "B1"))
	// Close folds q1's call only once it is final; kill the journal
	// instead by leaving it open and copying the files as a crash would.
	fr, _ := frame(&Entry{Intent: intent("q2", "k2", "B1"), State: StateDispatched})
	j.wal.f.WriteAt(fr[:len(fr)-5], j.wal.end) // a torn frame
	crashed := crashCopy(t, dir)
	j.Close()
	j2, err := Open(filepath.Join(crashed, FileName))
	if err != nil {
		t.Fatalf("open with a torn tail: %v", err)
	}
	defer j2.Close()
	if e, err := j2.Lookup(ctx, "sha256:aa", "k1"); err != nil || e.State != StateDispatched {
		t.Fatalf("the whole record before the tear: %+v %v", e, err)
	}
	if _, err := j2.Lookup(ctx, "sha256:aa", "k2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the torn record was read: %v", err)
	}
}

// crashCopy copies the journal's files in dir, as a crash of a process
// that holds them open would leave them (what the page cache holds), to a
// new directory it returns.
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	crashed := t.TempDir()
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm", LogName} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			os.WriteFile(filepath.Join(crashed, name), b, 0o600)
		}
	}
	return crashed
}

// soonHelper makes soonCalls calls one after another, each a Dispatch and a
// FinishSoon, with a flush delay far longer than the test: only the next
// call's Dispatch makes a result durable. Then it says "ready" and waits
// to be killed.
func soonHelper(path string) {
	j, err := OpenWith(path, Options{ResultDelay: time.Hour})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for i := range soonCalls {
		id := fmt.Sprintf("q-%d", i)
		if _, err := j.Dispatch(context.Background(), intent(id, "k-"+id, "B1")); err != nil {
			fmt.Println("dispatch:", err)
			os.Exit(1)
		}
		if err := j.FinishSoon(context.Background(), id, Result{Status: 200}); err != nil {
			fmt.Println("finish:", err)
			os.Exit(1)
		}
		if e, err := j.Lookup(context.Background(), "sha256:aa", "k-"+id); err != nil || e.State != StateResult {
			fmt.Println("lookup right after FinishSoon:", e.State, err)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	select {}
}

const soonCalls = 20

// TestKilledBeforeAResultIsDurable: results written with FinishSoon ride
// the next call's group commit; the process is killed (SIGKILL) with the
// last result queued and no commit after it. Reopened, every earlier call
// has its result, and the last reads as dispatched by an earlier process:
// STATUS_UNKNOWN to the gateway, never not sent, never unknown to the
// journal, and its key is still in use.
func TestKilledBeforeAResultIsDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "YETT_JOURNAL_SOON="+path)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
	}()
	select {
	case l := <-line:
		if l != "ready" {
			t.Fatalf("helper: %s", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper never got ready")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	j, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer j.Close()
	ctx := context.Background()
	for i := range soonCalls {
		id := fmt.Sprintf("q-%d", i)
		e, err := j.Lookup(ctx, "sha256:aa", "k-"+id)
		want := StateResult
		if i == soonCalls-1 {
			want = StateDispatched
		}
		if err != nil || e.State != want {
			t.Fatalf("%s after the kill: %s %v, want %s", id, e.State, err, want)
		}
	}
	last := fmt.Sprintf("q-%d", soonCalls-1)
	if _, err := j.Dispatch(ctx, intent("again", "k-"+last, "B2")); !errors.Is(err, ErrKeyInUse) {
		t.Fatalf("the key of the call whose result was lost: %v, want ErrKeyInUse", err)
	}
}
