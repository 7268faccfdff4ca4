//go:build unix

package inventory_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

// TestMCPServersAreRows: an upstream MCP server is a row like every other
// authorization (its declared owner taken over, its missing backup
// revoker named, its secrets by name only), an inventory edit of who
// answers for it lands on the server record, and while uncontrolled rows
// are blocked an agent's call of its tools is refused.
func TestMCPServersAreRows(t *testing.T) {
	const secret = "CANARY-inventory-mcp-3f9a"
	d := newDesk(t, deskOpts{})
	node, args := mcpservertest.Everything(t)
	s, err := d.v.MCPServers().Add(vault.NewMCPServer{Name: "everything", Transport: vault.TransportStdio, Command: node, Args: args,
		Secrets:           map[string]vault.Secret{"API_TOKEN": vault.NewSecret([]byte(secret))},
		MCPServerSettings: vault.MCPServerSettings{Owner: "ana"}})
	if err != nil {
		t.Fatal(err)
	}
	r := d.row(s.ID)
	if r.Kind != inventory.KindMCPServer || r.Owner != "ana" || r.Controlled || !slices.Contains(r.Missing, inventory.ColBackup) ||
		!slices.Equal(r.Scopes, []string{"secret environment API_TOKEN"}) || !strings.Contains(r.DisableProcedure, "stops the server") {
		t.Fatalf("the server's row: %+v", r)
	}
	for _, format := range []string{"csv", "json"} {
		out, err := d.inv().Export(d.ctx(), inventory.Filter{}, format)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), secret) || !strings.Contains(string(out), "everything") {
			t.Fatalf("the %s export: holds the secret or misses the server", format)
		}
	}

	if err := d.inv().SetBlockUncontrolled(d.ctx(), true); err != nil {
		t.Fatal(err)
	}
	a := d.agent()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := a.call("everything.echo", map[string]any{"message": "hi"})
		if res.IsError && strings.HasPrefix(res.Text, agentapi.CodeDenied+":") && strings.Contains(res.Text, "not under control") {
			break
		}
		if !strings.HasPrefix(res.Text, agentapi.CodeUnavailable) || time.Now().After(deadline) {
			t.Fatalf("a tool of an uncontrolled server: %+v", res)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := d.inv().SetField(d.ctx(), s.ID, inventory.FieldBackupRevoker, "luis"); err != nil {
		t.Fatal(err)
	}
	if err := d.inv().SetField(d.ctx(), s.ID, inventory.FieldEnvironment, "production"); err != nil {
		t.Fatal(err)
	}
	if r := d.row(s.ID); !r.Controlled {
		t.Fatalf("still not under control: %v", r.Missing)
	}
	if got, err := d.v.MCPServers().ByName("everything"); err != nil || got.BackupRevoker != "luis" || got.Owner != "ana" {
		t.Fatalf("the record after the inventory's edit: %+v %v", got, err)
	}
	if err := d.inv().SetBlockUncontrolled(d.ctx(), false); err != nil {
		t.Fatal(err)
	}
}
