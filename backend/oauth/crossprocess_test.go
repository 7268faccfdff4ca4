package oauth

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
	"github.com/yettdev/yett/internal/testsupport/syncbuf"
)

// Three processes (as `yett serve` and the desktop app would be) hold
// managers on one data directory. With the access token expired, each
// fires ten concurrent calls at the same moment: exactly one refresh
// reaches Hydra, and every call gets a token.
func TestCrossProcessSingleFlight(t *testing.T) {
	h := hydratest.Start(t, hydratest.Options{AccessTokenTTL: 3 * time.Second})
	ctr := h.CountingProxy(t)
	client := hydraPublicClient(t, h)
	dir := t.TempDir()
	e := newEnv(t, dir, Config{})
	id := connectCode(t, e, h, ctr.URL, ConnectRequest{ClientID: client, ClientAuth: ClientAuthNone, Scopes: []string{"offline_access"}, Unattended: true, Owner: "a", BackupRevoker: "b"})
	tokenRow, _ := loadRow(e.m.db, id)
	stored, err := e.m.tokens.openAccess(tokenRow)
	if err != nil || stored.expiry.IsZero() {
		t.Fatalf("stored access token: %v (an expiry is needed)", err)
	}
	e.close()

	type proc struct {
		cmd *exec.Cmd
		in  *os.File
		out *bufio.Scanner
		log *syncbuf.Buffer
	}
	procs := make([]*proc, 3)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrossProcess$", "-test.v")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r
		stdout, _ := cmd.StdoutPipe()
		log := &syncbuf.Buffer{}
		cmd.Stderr = log
		cmd.Env = append(os.Environ(), "YETT_OAUTH_HELPER_DIR="+dir, "YETT_OAUTH_HELPER_ID="+id,
			fmt.Sprintf("YETT_OAUTH_HELPER_AUDIT=%s", filepath.Join(t.TempDir(), "audit")), "DBUS_SESSION_BUS_ADDRESS=disabled:")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		p := &proc{cmd: cmd, in: w, out: bufio.NewScanner(stdout), log: log}
		t.Cleanup(func() { w.Close(); cmd.Process.Kill(); cmd.Wait() })
		procs[i] = p
	}
	expect := func(p *proc, want string) string {
		t.Helper()
		ch := make(chan string, 1)
		go func() {
			for p.out.Scan() {
				line := p.out.Text()
				if strings.HasPrefix(line, "HELPER ") {
					ch <- strings.TrimPrefix(line, "HELPER ")
					return
				}
				p.log.Write([]byte(line + "\n"))
			}
			ch <- "gone"
		}()
		select {
		case got := <-ch:
			if !strings.HasPrefix(got, want) {
				t.Fatalf("helper said %q, want %q; its stderr:\n%s", got, want, p.log.String())
			}
			return got
		case <-time.After(60 * time.Second):
			t.Fatalf("helper silent; its stderr:\n%s", p.log.String())
			return ""
		}
	}
	for _, p := range procs {
		expect(p, "ready")
	}
	// The stored access token expires (the helpers refresh 500 ms early).
	time.Sleep(time.Until(stored.expiry.Add(-400 * time.Millisecond)))
	before := ctr.TokenRequests()["refresh_token"]
	for _, p := range procs {
		fmt.Fprintln(p.in, "go")
	}
	for _, p := range procs {
		expect(p, "ok 10")
	}
	if got := ctr.TokenRequests()["refresh_token"] - before; got != 1 {
		t.Fatalf("%d refresh requests from 3 processes (want exactly 1)", got)
	}
}

// TestHelperCrossProcess is one of the processes above; it does nothing
// in a normal run.
func TestHelperCrossProcess(t *testing.T) {
	dir := os.Getenv("YETT_OAUTH_HELPER_DIR")
	if dir == "" || os.Getenv("YETT_OAUTH_HELPER_AUDIT") == "" {
		return
	}
	v, err := vault.Open(filepath.Join(dir, "vault"), vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Unlock(vault.Passphrase(testPassphrase)); err != nil {
		t.Fatal(err)
	}
	id, _ := v.AuditIdentity()
	l, _, err := audit.Open(audit.Options{Dir: os.Getenv("YETT_OAUTH_HELPER_AUDIT"), Recipient: id.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m, err := Open(Config{DataDir: dir, Vault: v, Audit: l, RefreshMargin: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	fmt.Println("HELPER ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease, err := m.Acquire(context.Background(), os.Getenv("YETT_OAUTH_HELPER_ID"), "test.op")
			if err != nil {
				fmt.Fprintln(os.Stderr, "acquire:", err)
				return
			}
			lease.Release(false)
			mu.Lock()
			ok++
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("HELPER ok %d\n", ok)
}
