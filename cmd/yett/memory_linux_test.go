package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/nonroot"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

func init() { testRoles["memread"] = memReadMain }

// memReadMain is what an agent of the same user tries on Yett's memory
// (issue 18, item 7): read /proc/<pid>/mem where the heap is, and attach
// with ptrace. It prints one line per try: "mem: read N bytes, canary K
// times" or "mem: <errno>", and "ptrace: attached" or "ptrace: <errno>".
func memReadMain() int {
	pid, _ := strconv.Atoi(os.Getenv("YETT_TEST_PID"))
	canary := []byte(os.Getenv("YETT_TEST_CANARY"))
	n, found, err := scanMemory(pid, canary)
	if err != nil {
		fmt.Println("mem:", errnoName(err))
	} else {
		fmt.Printf("mem: read %d bytes, canary %d times\n", n, found)
	}
	if err := unix.PtraceAttach(pid); err != nil {
		fmt.Println("ptrace:", errnoName(err))
	} else {
		fmt.Println("ptrace: attached")
		unix.PtraceDetach(pid)
	}
	return 0
}

func errnoName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// scanMemory reads every readable, writable private mapping of pid (the
// heap, the Go arenas, stacks) and counts the canary in it.
func scanMemory(pid int, canary []byte) (int, int, error) {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, 0, err
	}
	defer mem.Close()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, 0, err
	}
	total, found := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[1], "rw") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		buf := make([]byte, b-a)
		n, err := mem.ReadAt(buf, int64(a))
		if n == 0 && err != nil && !errors.Is(err, io.EOF) {
			if total == 0 {
				return 0, 0, err
			}
			continue
		}
		total += n
		found += bytes.Count(buf[:n], canary)
	}
	return total, found, nil
}

// TestServeMemoryClosedToTheUsersProcesses is issue 18, item 7: yett serve,
// run by a person who is not root, unlocked and after one approved call
// with a credential, is attacked by another process of the same person (no
// capability at all): /proc/<pid>/mem and PTRACE_ATTACH are both refused.
// On the code before (no PR_SET_DUMPABLE 0) this machine let that process
// read the heap and find the secret. The runner (root, CAP_SYS_PTRACE)
// then counts the secret's copies left in the heap.
func TestServeMemoryClosedToTheUsersProcesses(t *testing.T) {
	as := nonroot.Person(t)
	yett := as.Install(t, yettBin, "yett")
	dataDir := filepath.Join(as.Home, "data")
	recvURL, _ := startReceiver(t)
	seedVault(t, dataDir, strings.TrimPrefix(recvURL, "http://"))
	chownTree(t, as, dataDir)
	env := homeEnv(as.Home)
	serve := startPTYAs(t, as, env, yett, "serve", "--approval-timeout", "30s")
	serve.answer(t, "Yett vault passphrase: ", servePassphrase)
	serve.expect(t, "gateway listening")
	r := runAgent(t, as, env, yett, map[string]any{"method": "GET", "url": recvURL + "/memory-1"},
		func() { serve.approveCard(t, 1) })
	if r.err != nil || !strings.Contains(r.text, `"status":200`) {
		t.Fatalf("the approved call: %+v", r)
	}
	pid := serve.cmd.Process.Pid

	self := as.Install(t, os.Args[0], "attacker")
	attack := exec.Command(self, "-test.run=^$")
	attack.Env = append(os.Environ(), "YETT_TEST_ROLE=memread", "YETT_TEST_PID="+strconv.Itoa(pid), "YETT_TEST_CANARY="+serveCanary)
	var out syncbuf.Buffer
	attack.Stdout, attack.Stderr = &out, &out
	attack.Dir = as.Home
	as.Run(attack)
	if err := attack.Run(); err != nil {
		t.Fatalf("the attacker: %v: %s", err, out.String())
	}
	got := out.String()
	if !strings.Contains(got, "mem: EACCES") && !strings.Contains(got, "mem: EPERM") {
		t.Errorf("another process of %s read yett serve's memory: %s", as, got)
	}
	if !strings.Contains(got, "ptrace: EPERM") {
		t.Errorf("another process of %s attached to yett serve: %s", as, got)
	}
	if os.Getuid() == 0 {
		n, copies, err := scanMemory(pid, []byte(serveCanary))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("what the same user's process got: %q; as root: %d MiB of writable memory, the secret %d times in it after one call",
			strings.TrimSpace(got), n>>20, copies)
		// One call left six copies before; what can be wiped is wiped now
		// (the vault's decoding, the header value, the redactor's forms,
		// the pool key's hash). The one left is net/http's write buffer of
		// the kept-alive connection, which the threat model names.
		if copies > 1 {
			t.Errorf("the secret is %d times in yett serve's memory after one call, want at most 1", copies)
		}
	}
}

// seedVault makes a vault in dataDir with the serve tests' passphrase and a
// credential for host whose secret is serveCanary.
func seedVault(t *testing.T, dataDir, host string) {
	t.Helper()
	v, err := vault.Open(dataDir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Create(vault.Passphrase(servePassphrase), false); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Credentials().Add(vault.NewCredential{Name: "receiver", Secret: vault.NewSecret([]byte(serveCanary)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{host}, Approval: vault.ApprovalSession}); err != nil {
		t.Fatal(err)
	}
}

func chownTree(t *testing.T, as *nonroot.User, dir string) {
	t.Helper()
	if os.Getuid() != 0 {
		return
	}
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, as.UID, as.GID)
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
}
