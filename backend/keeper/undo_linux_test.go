package keeper

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// TestRemovalAndUndoThroughTheGateway: a person removes a credential
// while a real agent (through the real `yett mcp` shim) uses it, and
// undoes the removal. The removal takes effect at once: the agent's next
// call is refused with NO_CREDENTIAL and raises no card; a call that
// waited on its card across a removal and its undo is refused and never
// sent (the undo restores the credential at a new version). After the
// undo the same agent's calls carry the same secret again. The log holds
// each removal and each undo with the credential and its version, and no
// secret.
func TestRemovalAndUndoThroughTheGateway(t *testing.T) {
	const secret = "CANARY-keeper-undo-5b2e"
	recv := startSecretReceiver(t, secret)
	p := newPerCallKeeper(t, secret, recv)
	v, cred, broker, card, approve := p.v, p.cred, p.broker, p.card, p.approve
	agent := startAgent(t, p.runDir)
	ok := func(what string) {
		t.Helper()
		if r := agent.reply(); r.IsError || r.Err != "" {
			t.Fatalf("%s: %+v", what, r)
		}
	}
	url := "http://" + recv.addr

	agent.call(url + "/before")
	approve(approval.KindSession)
	approve(approval.KindCall)
	ok("the first call")

	// A call waits on its card across a removal and its undo.
	agent.call(url + "/waiting")
	waiting := card(approval.KindCall)
	if err := v.Credentials().Remove(cred.ID); err != nil {
		t.Fatal(err)
	}
	back, err := v.Credentials().Restore(cred.ID)
	if err != nil || back.Version != cred.Version+1 {
		t.Fatalf("undo: %+v %v", back, err)
	}
	if err := broker.Answer(waiting.ID, true, approval.SurfaceApp); err != nil {
		t.Fatal(err)
	}
	if r := agent.reply(); !r.IsError || !strings.Contains(r.Text, "nothing was sent") {
		t.Fatalf("the call that waited across the removal and its undo: %+v", r)
	}

	// The call right after a removal is refused, without a card.
	if err := v.Credentials().Remove(cred.ID); err != nil {
		t.Fatal(err)
	}
	agent.call(url + "/after-removal")
	if r := agent.reply(); !r.IsError || !strings.Contains(r.Text, "NO_CREDENTIAL") {
		t.Fatalf("the call right after the removal: %+v", r)
	}
	if p := broker.Pending(); len(p) != 0 {
		t.Fatalf("the refused call raised a card: %+v", p)
	}

	// Undone: the same agent's next call carries the same secret.
	again, err := v.Credentials().Restore(cred.ID)
	if err != nil {
		t.Fatal(err)
	}
	agent.call(url + "/after-undo")
	approve(approval.KindCall)
	ok("the call after the undo")

	got := recv.arrivals()
	want := []arrival{{"/before", 0}, {"/after-undo", 0}}
	if !slices.Equal(got, want) {
		t.Fatalf("the receiver saw %+v, want %+v", got, want)
	}

	if err := p.k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range events(t, v, p.dir) {
		if b, _ := json.Marshal(e); strings.Contains(string(b), secret) {
			t.Fatalf("the secret is in a %s entry", e.Type)
		}
		if e.Type != audit.EventVaultChanged || e.VaultChange == nil {
			continue
		}
		vc := e.VaultChange
		if vc.CredentialID != cred.ID || vc.Name != "receiver" {
			t.Errorf("%s does not name the credential: %+v", vc.Change, vc)
		}
		changes = append(changes, fmt.Sprintf("%s@%d", vc.Change, vc.Version))
	}
	wantChanges := []string{"credential_removed@1", "credential_restored@2", "credential_removed@2", fmt.Sprintf("credential_restored@%d", again.Version)}
	if !slices.Equal(changes, wantChanges) {
		t.Fatalf("the log holds %v, want %v", changes, wantChanges)
	}
}
