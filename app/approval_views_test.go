package app

import (
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/approval"
)

func TestChangeSentences(t *testing.T) {
	unsigned := AgentView{Signer: "unsigned"}
	signedBy := AgentView{Signer: "Developer ID Application: Example (ABCDE12345)", Signed: true}
	tests := []struct {
		change approval.Change
		who    AgentView
		want   string
	}{
		{approval.ChangeFirst, unsigned, "This process has not been approved before. Approve it to use git.example.com for this run."},
		{approval.ChangeAgentRestarted, unsigned, "The agent restarted. Approve this newly started process to use git.example.com for this run."},
		{approval.ChangeGatewayRestarted, unsigned, "Yett's gateway restarted, which ended every earlier approval. Approve this newly connected process to use git.example.com for this run."},
		{approval.ChangeVaultLocked, unsigned, "The vault was locked since this agent was approved, and unlocking did not restore its approval. Approve it again to use git.example.com for this run."},
		{approval.ChangeIdentityChanged, unsigned, "This process now runs a different executable (it is unsigned). Approve the new identity to use git.example.com for this run."},
		{approval.ChangeIdentityChanged, signedBy, "This process now runs a different executable (signed by Developer ID Application: Example (ABCDE12345)). Approve the new identity to use git.example.com for this run."},
		{approval.ChangeReconnected, unsigned, "The agent's connection to Yett closed and it connected again. Approve it again to use git.example.com for this run."},
		{approval.ChangeRevoked, unsigned, "You revoked this agent's session earlier. Approve it again only if you want it to use git.example.com for this run."},
		{approval.Change("something new"), unsigned, "Approve this process to use git.example.com for this run."},
	}
	for _, tt := range tests {
		t.Run(string(tt.change), func(t *testing.T) {
			head, got := changeWords(tt.change, "git.example.com", tt.who)
			if got != tt.want {
				t.Errorf("sentence\n got %q\nwant %q", got, tt.want)
			}
			if head == "" || strings.HasSuffix(head, ".") && tt.change != "something new" {
				t.Errorf("headline %q", head)
			}
		})
	}
}

func TestShortHash(t *testing.T) {
	for in, want := range map[string]string{
		"sha256:" + strings.Repeat("ab", 32): "sha256:abababababab",
		"sha256:abc":                         "sha256:abc",
		"":                                   "",
	} {
		if got := shortHash(in); got != want {
			t.Errorf("shortHash(%q) = %q, want %q", in, got, want)
		}
	}
}
