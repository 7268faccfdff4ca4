package app

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/procid"
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
		{approval.ChangeAnotherRun, unsigned, "This is another process of a program you approved; each process needs its own approval. Approve this one to use git.example.com for this run."},
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

// The card carries what the broker knows of the program's other runs, as
// a sentence of its own.
func TestCardDetail(t *testing.T) {
	c := cardView(approval.Request{ID: "rq", Kind: approval.KindSession, Change: approval.ChangeAnotherRun,
		ChangeDetail: "another run of this program (pid 7, approved at 10:00:00) is live. This is a separate process", Target: "x"}, time.Now())
	if c.Detail != "Another run of this program (pid 7, approved at 10:00:00) is live. This is a separate process." {
		t.Fatalf("detail %q", c.Detail)
	}
	if c.Headline != "Another run of this agent" {
		t.Fatalf("headline %q", c.Headline)
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

// The card shows who started `yett mcp` apart from the agent, and whether
// the agent holds its input and output (issue 9, item 6: a program the
// agent ran can exec the genuine shim on pipes a driver of its own holds).
func TestAgentViewShimChain(t *testing.T) {
	started := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	base := approval.Requester{
		Name: "node", PID: 500, Signer: procid.SignerUnsigned, ShimPID: 600, ShimStartedAt: started.Add(time.Minute),
		ShimParentPID: 500, ShimParentName: "node", ShimParentStartedAt: started, ShimParentCmdLine: "node /opt/claude/cli.js --token=[hidden]",
	}
	tests := []struct {
		name   string
		change func(*approval.Requester)
		stdio  string
		ok     bool
		text   string
	}{
		{"held by the agent that started it", func(r *approval.Requester) { r.Stdio = procid.StdioHeld }, "held", true,
			"This process started yett mcp and holds its input and output."},
		{"held through a wrapper", func(r *approval.Requester) { r.Stdio, r.ShimParentPID, r.ShimParentName = procid.StdioHeld, 550, "sh" }, "held", true,
			"This process holds yett mcp's input and output; it started yett mcp through sh (pid 550)."},
		{"held by a driver that did not start it", func(r *approval.Requester) { r.Stdio, r.PID, r.Name = procid.StdioHeldNotParent, 700, "python3" }, "held-not-parent", false,
			"yett mcp was started by node (pid 500), but this process holds its input and output: this process asks, not the one that started yett mcp."},
		{"held by nobody it can name", func(r *approval.Requester) { r.Stdio, r.PID, r.Name = procid.StdioNotHeld, 600, "yett" }, "not-held", false,
			"yett mcp was started by node (pid 500), which does not hold its input and output, and no single process Yett can name does: yett mcp asks for itself, for as long as it runs."},
		{"not checked on this OS", func(r *approval.Requester) { r.Stdio = procid.StdioNotChecked }, "not-checked", false,
			"Who holds yett mcp's input and output is not checked on this OS."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.change(&r)
			v := agentView(r)
			if v.Stdio != tt.stdio || v.StdioOK != tt.ok || v.StdioText != tt.text {
				t.Errorf("stdio %q ok %v\n got %q\nwant %q", v.Stdio, v.StdioOK, v.StdioText, tt.text)
			}
			want := ProcessView{Name: r.ShimParentName, PID: r.ShimParentPID, StartedAt: "2026-11-30T09:00:00Z", CmdLine: base.ShimParentCmdLine}
			if v.ShimParent != want || v.ShimPID != 600 || v.ShimStartedAt != "2026-11-30T09:01:00Z" {
				t.Errorf("shim %d %q parent %+v, want %+v", v.ShimPID, v.ShimStartedAt, v.ShimParent, want)
			}
		})
	}
	// A requester without the facts (no shim known) shows no claim at all.
	if v := agentView(approval.Requester{Name: "x"}); v.StdioText != "" || v.StdioOK || v.ShimParent.StartedAt != "" {
		t.Errorf("empty requester view %+v", v)
	}
}
