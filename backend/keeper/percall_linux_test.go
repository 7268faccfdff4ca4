package keeper

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/vault"
)

// perCallKeeper is what the tests of a person's changes to a credential in
// use start from: a vault with one credential, "receiver", bound to a
// receiver and approved on every call, and a keeper serving it through its
// gateway, whose cards the person approves in the window, verified.
type perCallKeeper struct {
	t           *testing.T
	v           *vault.Vault
	dir, runDir string
	cred        vault.CredentialView
	k           *Keeper
	broker      *approval.Broker
}

func newPerCallKeeper(t *testing.T, secret string, recv *secretReceiver) *perCallKeeper {
	t.Helper()
	base, err := os.MkdirTemp("", "yk") // short: the socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p := &perCallKeeper{t: t, dir: filepath.Join(base, "data"), runDir: filepath.Join(base, "run")}
	p.v = openVault(t, p.dir)
	if err := p.v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	p.cred, err = p.v.Credentials().Add(vault.NewCredential{
		Name: "receiver", Secret: vault.NewSecret([]byte(secret)), Injection: vault.Injection{Format: vault.InjectBearer},
		Hosts: []string{recv.addr}, Approval: vault.ApprovalPerCall,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.k, err = Open(Config{DataDir: p.dir, RuntimeDir: p.runDir, Vault: p.v, ShimPath: buildYett(t), ApprovalTimeout: time.Minute,
		Presence: &testPresence{present: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.k.Close() })
	if p.broker = p.k.State().Broker; p.broker == nil {
		t.Fatalf("no gateway: %+v", p.k.State())
	}
	return p
}

// card waits for the one pending card of kind.
func (p *perCallKeeper) card(kind approval.Kind) approval.Request {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range p.broker.Pending() {
			if r.Kind == kind {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("no %s card", kind)
	return approval.Request{}
}

// approve approves the pending card of kind in the window.
func (p *perCallKeeper) approve(kind approval.Kind) {
	p.t.Helper()
	if err := p.broker.Answer(p.card(kind).ID, true, approval.SurfaceApp); err != nil {
		p.t.Fatal(err)
	}
}
