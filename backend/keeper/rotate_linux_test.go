package keeper

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// secretReceiver records, for each arrival, its path and which of the
// test's secrets it carried (compared here, never stored or printed).
type secretReceiver struct {
	addr    string
	secrets []string
	mu      sync.Mutex
	got     []arrival
}

type arrival struct {
	path   string
	secret int // index into secrets, -1 for none
}

func startSecretReceiver(t testing.TB, secrets ...string) *secretReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &secretReceiver{addr: ln.Addr().String(), secrets: secrets}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a := arrival{path: req.URL.Path, secret: -1}
		for i, s := range secrets {
			if req.Header.Get("Authorization") == "Bearer "+s {
				a.secret = i
			}
		}
		r.mu.Lock()
		r.got = append(r.got, a)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

func (r *secretReceiver) arrivals() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.got...)
}

// TestRotationThroughTheGateway: a person rotates a credential's secret
// while a real agent (a separate process through the real `yett mcp` shim)
// uses it through the keeper's gateway. The call that waited on its card
// across the rotation is refused and never sent; every call after the
// rotation carries the new secret and none the old one; the audit log
// records the rotation with the credential and its new version, and holds
// neither secret.
func TestRotationThroughTheGateway(t *testing.T) {
	const (
		oldSecret = "CANARY-keeper-rotate-old-3c81"
		newSecret = "CANARY-keeper-rotate-new-94fe"
	)
	recv := startSecretReceiver(t, oldSecret, newSecret)
	p := newPerCallKeeper(t, oldSecret, recv)
	v, cred, broker, card, approve := p.v, p.cred, p.broker, p.card, p.approve
	a := startAgent(t, p.runDir)
	url := "http://" + recv.addr
	// 1. Before the rotation: the old secret.
	a.call(url + "/before")
	approve(approval.KindSession)
	approve(approval.KindCall)
	if r := a.reply(); r.IsError || r.Err != "" {
		t.Fatalf("the first call: %+v", r)
	}

	// 2. A call waits on its card while the secret is rotated: approving it
	// afterwards sends nothing.
	a.call(url + "/waiting")
	waiting := card(approval.KindCall)
	rotated, err := v.Credentials().Rotate(cred.ID, cred.Version, vault.NewSecret([]byte(newSecret)))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Version != cred.Version+1 {
		t.Fatalf("version %d after rotating version %d", rotated.Version, cred.Version)
	}
	if err := broker.Answer(waiting.ID, true, approval.SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if r := a.reply(); !r.IsError || !strings.Contains(r.Text, "nothing was sent") {
		t.Fatalf("the call that waited across the rotation: %+v", r)
	}

	// 3. After the rotation: the same agent's next calls carry the new secret.
	for _, p := range []string{"/after-1", "/after-2"} {
		a.call(url + p)
		approve(approval.KindCall)
		if r := a.reply(); r.IsError || r.Err != "" {
			t.Fatalf("the call to %s after the rotation: %+v", p, r)
		}
	}

	got := recv.arrivals()
	want := []arrival{{"/before", 0}, {"/after-1", 1}, {"/after-2", 1}}
	if len(got) != len(want) {
		t.Fatalf("the receiver saw %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("the receiver saw %+v, want %+v (secret 0 is the old one, 1 the new)", got, want)
		}
	}

	if err := p.k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	var rotations, refusedChanged int
	for _, e := range events(t, v, p.dir) {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), oldSecret) || strings.Contains(string(b), newSecret) {
			t.Fatalf("a secret is in a %s entry", e.Type)
		}
		switch {
		case e.Type == audit.EventVaultChanged && e.VaultChange != nil && e.VaultChange.Change == string(vault.ChangeSecretRotated):
			if vc := e.VaultChange; vc.CredentialID != cred.ID || vc.Name != "receiver" || vc.Version != rotated.Version {
				t.Errorf("the rotation's entry: %+v", vc)
			}
			rotations++
		case e.Type == audit.EventActionDenied && e.Reason == audit.ReasonCredentialChanged:
			if e.Action == nil || e.Action.CredentialRef != cred.ID {
				t.Errorf("the refusal does not name the credential: %+v", e.Action)
			}
			refusedChanged++
		}
	}
	if rotations != 1 || refusedChanged != 1 {
		t.Fatalf("the log holds %d rotation(s) and %d credential_changed refusal(s), want 1 and 1", rotations, refusedChanged)
	}
}
