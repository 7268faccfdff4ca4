package inventory_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// The inventory's tests run it where it runs in the product: in the
// keeper (the composition root), with OAuth custody, the catalogue, the
// gateway and a vault of their own. Agents are real: this test binary
// re-executed as an MCP client that starts the real `yett mcp` shim.

const (
	pass     = "correct horse battery staple"
	agentEnv = "YETT_INVENTORY_TEST_AGENT"
)

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		os.Exit(agentMain())
	}
	code := m.Run()
	if yettBin != "" {
		os.RemoveAll(filepath.Dir(yettBin))
	}
	os.Exit(code)
}

// agentCall is one line on the agent's stdin: a tool and its arguments.
type agentCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

type agentReply struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
	Err     string `json:"err"`
}

func agentMain() int {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "inventory-test-agent", Version: "0"}, nil)
	shim := exec.Command(os.Getenv("YETT_BIN"), "mcp")
	shim.Stderr = os.Stderr
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	session, err := client.Connect(cctx, &mcp.CommandTransport{Command: shim}, nil)
	cancel()
	out := json.NewEncoder(os.Stdout)
	if err != nil {
		out.Encode(agentReply{Err: err.Error()})
		return 1
	}
	defer session.Close()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var c agentCall
		if json.Unmarshal(in.Bytes(), &c) != nil {
			continue
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
		if err != nil {
			out.Encode(agentReply{Err: err.Error()})
			continue
		}
		var texts []string
		for _, ct := range res.Content {
			if t, ok := ct.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		out.Encode(agentReply{Text: strings.Join(texts, "\n"), IsError: res.IsError})
	}
	return 0
}

var (
	yettOnce sync.Once
	yettBin  string
	yettErr  error
)

// buildYett builds the real yett CLI once per test binary.
func buildYett(t testing.TB) string {
	t.Helper()
	yettOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yett-inventory-bin-")
		if err != nil {
			yettErr = err
			return
		}
		yettBin = filepath.Join(dir, "yett")
		if out, err := yettbuild.Command("-o", yettBin, "github.com/yettdev/yett/cmd/yett").CombinedOutput(); err != nil {
			yettErr = fmt.Errorf("go build cmd/yett: %v\n%s", err, out)
		}
	})
	if yettErr != nil {
		t.Fatal(yettErr)
	}
	return yettBin
}

// agent is a running test agent.
type agent struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan agentReply
	stderr  *lockedBuilder
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startAgent(t testing.TB, runDir string) *agent {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"=1", "YETT_BIN="+buildYett(t), "YETT_RUNTIME_DIR="+runDir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, cmd: cmd, in: in, replies: make(chan agentReply, 16), stderr: &lockedBuilder{}}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r agentReply
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				r.Err = "unreadable reply: " + sc.Text()
			}
			a.replies <- r
		}
		close(a.replies)
	}()
	t.Cleanup(a.kill)
	return a
}

// send asks the agent to call tool; its reply comes from reply.
func (a *agent) send(tool string, args map[string]any) {
	b, _ := json.Marshal(agentCall{Tool: tool, Args: args})
	fmt.Fprintf(a.in, "%s\n", b)
}

func (a *agent) reply() agentReply {
	a.t.Helper()
	select {
	case r, ok := <-a.replies:
		if !ok {
			a.t.Fatalf("the agent exited (stderr %s)", a.stderr)
		}
		return r
	case <-time.After(60 * time.Second):
		a.t.Fatalf("the agent's call never returned (stderr %s)", a.stderr)
		return agentReply{}
	}
}

func (a *agent) call(tool string, args map[string]any) agentReply {
	a.t.Helper()
	a.send(tool, args)
	return a.reply()
}

func (a *agent) kill() {
	if a.cmd.ProcessState == nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
	}
}

// desk is one data directory kept by a keeper, as the app or yett serve
// keep it.
type desk struct {
	t        testing.TB
	dir, run string
	v        *vault.Vault
	k        *keeper.Keeper
}

type deskOpts struct {
	// dir and run reuse directories (a restart); "" makes new ones.
	dir, run string
	// now, when set, is the inventory's clock (keeper.Config has none:
	// tests that need one change the data instead).
}

// newDesk opens (or creates) the vault of o.dir and a keeper following it,
// unlocked.
func newDesk(t testing.TB, o deskOpts) *desk {
	t.Helper()
	d := &desk{t: t, dir: o.dir, run: o.run}
	if d.dir == "" {
		base, err := os.MkdirTemp("", "yi") // short: the socket path has a length limit
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
		d.dir, d.run = filepath.Join(base, "data"), filepath.Join(base, "run")
	}
	v, err := vault.Open(d.dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	d.v = v
	k, err := keeper.Open(keeper.Config{DataDir: d.dir, RuntimeDir: d.run, Vault: v, ShimPath: buildYett(t), ApprovalTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	d.k = k
	if v.Status().State == vault.StateUninitialised {
		err = v.Create(vault.Passphrase(pass), false)
	} else {
		err = v.Unlock(vault.Passphrase(pass))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	st := k.State()
	if st.Inventory == nil || st.OAuth == nil || st.Broker == nil {
		t.Fatalf("keeper state: %+v", st)
	}
	return d
}

func (d *desk) close() {
	if d.k != nil {
		d.k.Close()
		d.k = nil
	}
	if d.v != nil {
		d.v.Close()
		d.v = nil
	}
}

func (d *desk) inv() *inventory.Inventory { return d.k.State().Inventory }
func (d *desk) oauth() *oauth.Custody     { return d.k.State().OAuth }
func (d *desk) ops() *operation.Catalogue { return d.k.State().Operations }
func (d *desk) broker() *approval.Broker  { return d.k.State().Broker }
func (d *desk) rows() []inventory.Row     { return d.rowsF(inventory.Filter{}) }
func (d *desk) ctx() context.Context      { return context.Background() }
func (d *desk) agent() *agent             { return startAgent(d.t, d.run) }
func (d *desk) rowsF(f inventory.Filter) []inventory.Row {
	d.t.Helper()
	rows, err := d.inv().Rows(d.ctx(), f)
	if err != nil {
		d.t.Fatal(err)
	}
	return rows
}

func (d *desk) row(id string) inventory.Row {
	d.t.Helper()
	r, err := d.inv().Row(d.ctx(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}

// approveNext approves the next session card.
func (d *desk) approveNext() {
	d.t.Helper()
	waitFor(d.t, "a session card", func() bool {
		for _, p := range d.broker().Pending() {
			if p.Kind == approval.KindSession {
				if err := d.broker().Answer(p.ID, true, approval.SurfaceApp); err != nil {
					d.t.Fatal(err)
				}
				return true
			}
		}
		return false
	})
}

// events decrypts the log with the vault's audit identity.
func (d *desk) events() []audit.Entry {
	d.t.Helper()
	id, err := d.v.AuditIdentity()
	if err != nil {
		d.t.Fatal(err)
	}
	var out []audit.Entry
	for e, err := range audit.ReadEvents(filepath.Join(d.dir, "audit", audit.LogFile), id) {
		if err != nil {
			d.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// waitFor polls cond for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
