package vault

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const crashHelperEnv = "YETT_VAULT_CRASH_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		runCrashHelper(dir)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCrashHelper writes to the vault in a loop until killed. It prints a
// line after each write is committed: "epoch N", "added ID", "removed ID".
func runCrashHelper(dir string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(3)
	}
	v, err := Open(dir, Options{KDF: testKDF, ThrottleBase: time.Millisecond})
	if err != nil {
		fail(err)
	}
	if v.Status().State == StateUninitialised {
		err = v.Create(pass(testPass), false)
	} else {
		err = v.Unlock(pass(testPass))
	}
	if err != nil {
		fail(err)
	}
	fmt.Println("epoch", v.Epoch())
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	for i := 0; ; i++ {
		switch rng.IntN(6) {
		case 0, 1:
			c, err := v.Credentials().Add(sampleCredential(fmt.Sprintf("c%d", i), fmt.Sprintf("CANARY-crash-%d", i)))
			if err != nil {
				fail(err)
			}
			fmt.Println("added", c.ID)
		case 2:
			list, err := v.Credentials().List()
			if err != nil {
				fail(err)
			}
			if len(list) > 0 {
				id := list[rng.IntN(len(list))].ID
				if err := v.Credentials().Remove(id); err != nil {
					fail(err)
				}
				fmt.Println("removed", id)
			}
		case 3, 4:
			if err := v.Lock("crash loop"); err != nil {
				fail(err)
			}
			fmt.Println("epoch", v.Epoch())
			if err := v.Unlock(pass(testPass)); err != nil {
				fail(err)
			}
			fmt.Println("epoch", v.Epoch())
		case 5:
			if err := v.SetAutoLockAfter(time.Duration(1+rng.IntN(600)) * time.Minute); err != nil {
				fail(err)
			}
		}
	}
}

// TestCrashDuringWrites kills a writing process at random points and checks
// that every time the vault opens and unlocks, holds every committed
// credential, and that epochs never repeat.
func TestCrashDuringWrites(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var lastEpoch uint64
	present := map[string]bool{} // committed and not removed, per the helper's reports
	const kills = 20
	for round := 0; round < kills; round++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashHelperEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			s := bufio.NewScanner(out)
			for s.Scan() {
				lines <- s.Text()
			}
			close(lines)
		}()
		first, ok := <-lines
		if !ok || !strings.HasPrefix(first, "epoch ") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: helper did not start: %q", round, first)
		}
		time.Sleep(time.Duration(20+rand.IntN(250)) * time.Millisecond)
		// Process.Kill is SIGKILL on Unix: no deferred code, no clean close.
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		var reported []string
		reported = append(reported, first)
		for l := range lines {
			reported = append(reported, l)
		}
		cmd.Wait()
		var removedUnreported int
		for _, l := range reported {
			kind, arg, _ := strings.Cut(l, " ")
			switch kind {
			case "epoch":
				e, _ := strconv.ParseUint(arg, 10, 64)
				if e <= lastEpoch {
					t.Fatalf("round %d: epoch %d repeats or goes back (previous %d)", round, e, lastEpoch)
				}
				lastEpoch = e
			case "added":
				present[arg] = true
			case "removed":
				delete(present, arg)
			case "error":
				t.Fatalf("round %d: helper failed: %s", round, l)
			}
		}

		v, err := Open(dir, testOptions(nil))
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		if err := v.Unlock(pass(testPass)); err != nil {
			t.Fatalf("round %d: unlock after kill: %v", round, err)
		}
		if e := v.Epoch(); e <= lastEpoch {
			t.Fatalf("round %d: epoch after restart %d, not above %d", round, e, lastEpoch)
		}
		list, err := v.Credentials().List()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, c := range list {
			have[c.ID] = true
		}
		// A removal committed just before the kill may not have been
		// reported; at most one reported credential may be missing.
		for id := range present {
			if !have[id] {
				removedUnreported++
				delete(present, id)
			}
		}
		if removedUnreported > 1 {
			t.Fatalf("round %d: %d committed credentials lost", round, removedUnreported)
		}
		// An addition committed but not reported is new state: adopt it.
		for id := range have {
			present[id] = true
		}
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
		lastEpoch = v.Epoch()
		t.Logf("round %d: %d writes reported, %d credentials, epoch %d", round, len(reported), len(list), lastEpoch)
	}
}
