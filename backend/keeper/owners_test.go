package keeper

import (
	"context"
	"testing"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// TestCustodyNamesTheInventorysOwner: OAuth custody's audit entries name
// the owner the inventory holds, so an owner edited in the Inventory view
// is the one the next entry names (the owner declared at connection until
// then).
func TestCustodyNamesTheInventorysOwner(t *testing.T) {
	const secret = "CANARY-keeper-owner-secret-0e4a"
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: secret})
	dir := t.TempDir()
	v := openVault(t, dir)
	k, err := Open(Config{DataDir: dir, RuntimeDir: t.TempDir(), Vault: v, Origin: "terminal", NoGateway: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Create(vault.Passphrase(pass), false); err != nil {
		t.Fatal(err)
	}
	st := k.State()
	ctx := context.Background()
	f, err := st.OAuth.Connect(ctx, oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Endpoints: oauth.Endpoints{Issuer: p.URL}, ClientID: oauthtest.DefaultClientID,
		ClientAuth: oauth.ClientAuthSecret, ClientSecret: []byte(secret), Scopes: []string{"read"},
		Environment: "development", Flow: oauth.FlowClientCredentials, Owner: "alice", BackupRevoker: "bob",
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Inventory == nil {
		t.Fatal("no inventory")
	}
	if err := st.Inventory.SetField(ctx, f.AuthorizationID, inventory.FieldOwner, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := st.OAuth.Suspend(ctx, f.AuthorizationID, "test"); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(vault.Passphrase(pass)); err != nil {
		t.Fatal(err)
	}
	owners := map[audit.EventType]string{}
	for _, e := range events(t, v, dir) {
		if e.OAuth != nil {
			owners[e.Type] = e.OAuth.Owner
		}
	}
	if owners[audit.EventAuthorizationConnected] != "alice" || owners[audit.EventAuthorizationDisabled] != "carol" {
		t.Fatalf("owners named by custody's entries: %v, want alice at connection and carol after the inventory edit", owners)
	}
}
