//go:build unix

package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/agentapi"
)

// TestClientsSeen: a tool call through the real shim notes the client as
// it names itself (control characters dropped), the program and pid the
// kernel names, and when; the note reaches ClientsFile off the call path
// and a restarted gateway still knows it.
func TestClientsSeen(t *testing.T) {
	w := newWorld(t, worldOpts{})
	client := mcp.NewClient(&mcp.Implementation{Name: "Test\x07 Agent\n", Version: "2.1.328"}, nil)
	s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: newShimCmd(w.runDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC()
	if res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: agentapi.ToolStatus, Arguments: map[string]any{"request_id": "nope"}}); err != nil || res == nil {
		t.Fatalf("yett.status: %v", err)
	}
	s.Close()
	seen := w.gw.Clients()
	if len(seen) != 1 || seen[0].Name != "Test Agent" || seen[0].Version != "2.1.328" || seen[0].PID != os.Getpid() ||
		seen[0].Program == "" || seen[0].LastCall.Before(before.Add(-time.Second)) {
		t.Fatalf("seen %+v (pid %d)", seen, os.Getpid())
	}
	deadline := time.Now().Add(testWait)
	for {
		list, err := ReadClients(w.dataDir)
		if err == nil && len(list) == 1 && list[0] == seen[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %+v (%v), want %+v", ClientsFile, list, err, seen[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.stop()
	w.start()
	if again := w.gw.Clients(); len(again) != 1 || again[0] != seen[0] {
		t.Fatalf("after a restart: %+v", again)
	}
}

// The book keeps the newest maxClientsSeen names, and a file that does not
// parse is an error for a reader but no reason for the gateway not to start.
func TestClientBookBounds(t *testing.T) {
	dir := t.TempDir()
	b := openClientBook(dir)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range maxClientsSeen + 8 {
		b.saw(&mcp.Implementation{Name: fmt.Sprintf("client-%02d", i)}, "node", 100+i, t0.Add(time.Duration(i)*time.Minute))
	}
	list := b.list()
	if len(list) != maxClientsSeen || list[0].Name != fmt.Sprintf("client-%02d", maxClientsSeen+7) || list[len(list)-1].Name != "client-08" {
		t.Fatalf("kept %d, newest %q, oldest %q", len(list), list[0].Name, list[len(list)-1].Name)
	}
	b.saw(nil, "node", 1, t0.Add(time.Hour))
	if l := b.list(); l[0].Name != "(unnamed client)" || len(l) != maxClientsSeen {
		t.Fatalf("a client with no name: %+v", l[0])
	}
	// The same client again moves only its time.
	b.saw(&mcp.Implementation{Name: "client-39"}, "node", 139, t0.Add(2*time.Hour))
	if l := b.list(); len(l) != maxClientsSeen || l[0].Name != "client-39" || !l[0].LastCall.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("the same client again: %+v", l[0])
	}
	os.WriteFile(filepath.Join(dir, ClientsFile), []byte("{not json"), 0o600)
	if _, err := ReadClients(dir); err == nil {
		t.Fatal("a broken clients file read as a list")
	}
	if b := openClientBook(dir); len(b.list()) != 0 {
		t.Fatal("a broken file gave clients")
	}
}
