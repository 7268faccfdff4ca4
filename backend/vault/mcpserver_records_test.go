package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mcpSecretCanary = "CANARY-mcp-7b1f0c22-never-leak"

func sampleServer(name string) NewMCPServer {
	return NewMCPServer{
		Name: name, Transport: TransportStdio, Command: "/usr/bin/node", Args: []string{"server.js", "stdio"},
		Env:               map[string]string{"LOG_LEVEL": "debug"},
		Secrets:           map[string]Secret{"API_TOKEN": NewSecret([]byte(mcpSecretCanary))},
		MCPServerSettings: MCPServerSettings{Tools: map[string]Approval{"get-env": ApprovalPerCall}, Owner: "ana@example.com"},
	}
}

func TestMCPServerLifecycle(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	s, err := v.MCPServers().Add(sampleServer("everything"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Approval != ApprovalWrites || s.Version != 1 || len(s.SecretNames) != 1 || s.SecretNames[0] != "API_TOKEN" {
		t.Fatalf("defaults: %+v", s)
	}
	if s.ToolApproval("get-env") != ApprovalPerCall || s.ToolApproval("echo") != ApprovalWrites {
		t.Fatalf("tool approval: %+v", s)
	}
	if _, err := v.MCPServers().Add(sampleServer("everything")); !errors.Is(err, ErrMCPServerExists) {
		t.Fatalf("a second server of the same name: %v", err)
	}
	sec, err := v.MCPServers().SecretsOf(s.ID, s.Version)
	if err != nil || string(sec["API_TOKEN"].Bytes()) != mcpSecretCanary {
		t.Fatalf("secrets: %v", err)
	}
	sec["API_TOKEN"].Wipe()
	up, err := v.MCPServers().Update(s.ID, MCPServerSettings{Approval: ApprovalPerCall, BackupRevoker: "bo"})
	if err != nil || up.Version != 2 || up.Approval != ApprovalPerCall || up.Tools != nil || up.Command != s.Command {
		t.Fatalf("update: %+v %v", up, err)
	}
	// Secrets are lent for the version a caller chose, never another.
	if _, err := v.MCPServers().SecretsOf(s.ID, s.Version); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("secrets of an old version: %v", err)
	}
	if err := v.Lock("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.MCPServers().List(); !errors.Is(err, ErrLocked) {
		t.Fatalf("listed while locked: %v", err)
	}
	if _, err := v.MCPServers().SecretsOf(s.ID, up.Version); !errors.Is(err, ErrLocked) {
		t.Fatalf("secrets while locked: %v", err)
	}
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	got, err := v.MCPServers().ByName("everything")
	if err != nil || got.Version != 2 || got.BackupRevoker != "bo" || got.Env["LOG_LEVEL"] != "debug" {
		t.Fatalf("after unlock: %+v %v", got, err)
	}
	if err := v.MCPServers().Remove(s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.MCPServers().SecretsOf(s.ID, up.Version); !errors.Is(err, ErrCredentialChanged) {
		t.Fatalf("secrets of a removed server: %v", err)
	}
	if _, err := v.MCPServers().ByName("everything"); !errors.Is(err, ErrNoMCPServer) {
		t.Fatalf("a removed server: %v", err)
	}
}

func TestMCPServerValidation(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	for name, edit := range map[string]func(*NewMCPServer){
		"name with a dot":     func(s *NewMCPServer) { s.Name = "git.hub" },
		"name upper case":     func(s *NewMCPServer) { s.Name = "GitHub" },
		"relative command":    func(s *NewMCPServer) { s.Command = "node" },
		"stdio with a URL":    func(s *NewMCPServer) { s.URL = "https://x" },
		"bad env name":        func(s *NewMCPServer) { s.Env = map[string]string{"A=B": "c"} },
		"env and secret":      func(s *NewMCPServer) { s.Env = map[string]string{"API_TOKEN": "x"} },
		"secret with a line":  func(s *NewMCPServer) { s.Secrets = map[string]Secret{"T": NewSecret([]byte("a\nb"))} },
		"empty secret":        func(s *NewMCPServer) { s.Secrets = map[string]Secret{"T": {}} },
		"transport":           func(s *NewMCPServer) { s.Transport = "sse" },
		"tool approval":       func(s *NewMCPServer) { s.Tools = map[string]Approval{"x": "never"} },
		"remote with command": func(s *NewMCPServer) { s.Transport = TransportHTTP; s.URL = "https://mcp.example.com/mcp" },
		"remote user info": func(s *NewMCPServer) {
			*s = NewMCPServer{Name: "r", Transport: TransportHTTP, URL: "https://u:p@mcp.example.com/mcp"}
		},
		"remote bad header": func(s *NewMCPServer) {
			*s = NewMCPServer{Name: "r", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp",
				Secrets: map[string]Secret{"Bad Header": NewSecret([]byte("x1234"))}}
		},
		"stdio with oauth": func(s *NewMCPServer) { s.OAuth = "az-1234" },
		"oauth not an id": func(s *NewMCPServer) {
			*s = NewMCPServer{Name: "r", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp", OAuth: "github"}
		},
		"oauth and an authorization header": func(s *NewMCPServer) {
			*s = NewMCPServer{Name: "r", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp", OAuth: "az-1234",
				Secrets: map[string]Secret{"authorization": NewSecret([]byte("Bearer x1234"))}}
		},
		"oauth over plain http": func(s *NewMCPServer) {
			*s = NewMCPServer{Name: "r", Transport: TransportHTTP, URL: "http://mcp.example.com/mcp", OAuth: "az-1234"}
		},
	} {
		s := sampleServer("ok")
		edit(&s)
		if _, err := v.MCPServers().Add(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the error quotes the secret", name)
		}
	}
	remote := NewMCPServer{Name: "remote", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp",
		Secrets: map[string]Secret{"Authorization": NewSecret([]byte("Bearer " + mcpSecretCanary))}}
	if _, err := v.MCPServers().Add(remote); err != nil {
		t.Fatalf("a remote server: %v", err)
	}
	oauthServer := NewMCPServer{Name: "linear", Transport: TransportHTTP, URL: "http://127.0.0.1:8080/mcp", OAuth: "az-Q1w2e3"}
	if got, err := v.MCPServers().Add(oauthServer); err != nil || got.OAuth != "az-Q1w2e3" {
		t.Fatalf("a server with an OAuth authorization: %+v, %v", got, err)
	}
	if got, err := v.MCPServers().ByName("linear"); err != nil || got.OAuth != "az-Q1w2e3" {
		t.Fatalf("its authorization read back: %+v, %v", got, err)
	}
}

// The secrets reach no view, no JSON, no format verb and no file in the
// clear; a record altered in the file is damage at the next unlock.
func TestMCPServerSecretCanaryAndTamper(t *testing.T) {
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	ns := sampleServer("canary")
	s, err := v.MCPServers().Add(ns)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := v.MCPServers().List()
	js, _ := json.Marshal(list)
	nsJSON, _ := json.Marshal(ns)
	printed := fmt.Sprintf("%v %+v %#v", ns, s, list)
	for what, text := range map[string]string{"list": string(js), "new server JSON": string(nsJSON), "fmt": printed} {
		if strings.Contains(text, "CANARY-mcp") {
			t.Errorf("%s shows the secret", what)
		}
	}
	v.Lock("t")
	v.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("CANARY-mcp")) || bytes.Contains(b, []byte("/usr/bin/node")) {
			t.Errorf("%s holds the server in the clear", filepath.Base(f))
		}
	}
	tamper(t, dir, xorBytes("vault_records", "sealed", "id = ?", []int{32}, s.ID))
	v2 := openVault(t, dir, testOptions(newFakeClock()))
	if err := v2.Unlock(pass(testPass)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("unlock of an altered server record: %v", err)
	}
}
