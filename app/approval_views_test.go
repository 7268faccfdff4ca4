package app

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/procid"
)

// The card shows the broker's words (backend/approval), which the
// notifications share, and splits a call's target into host and path.
func TestCardWordsAreTheBrokers(t *testing.T) {
	r := approval.Request{ID: "rq", Kind: approval.KindSession, Change: approval.ChangeGatewayRestarted, Target: "git.example.com",
		Who: approval.Requester{PID: 42}}
	c := cardView(r, time.Now())
	if c.Headline != r.Headline() || c.Sentence != r.Sentence() || c.Scope != r.Scope() || c.Headline == "" {
		t.Fatalf("card %+v", c)
	}
	call := cardView(approval.Request{ID: "rq2", Kind: approval.KindCall, Method: "POST", Target: "api.example.com/v1/x", Credential: "ci"}, time.Now())
	if call.Target != "api.example.com" || call.Path != "/v1/x" || call.Scope != "this call only" {
		t.Fatalf("call card %+v", call)
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
		{"in another network namespace", func(r *approval.Requester) {
			r.Stdio, r.PID, r.Name = procid.StdioOtherNetns, 600, "node, through yett mcp"
		}, "other-netns", false,
			"yett mcp was started by node (pid 500), which runs in another network namespace (a container or a sandbox): there the kernel does not tell Yett who holds yett mcp's input and output, so yett mcp asks for itself, for as long as it runs."},
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

// An SSH command's card carries the command exactly and the start of its
// input; its target (user@host:port) is not split as a URL's.
func TestCardCarriesTheSSHCommand(t *testing.T) {
	r := approval.Request{ID: "rq3", Kind: approval.KindCall, Channel: "ssh", Method: "exec", Target: "deploy@web-1/x:2222",
		Credential: "web-1", Command: "cat /etc/hostname; id", Stdin: "input", StdinBytes: 5}
	c := cardView(r, time.Now())
	if c.Command != r.Command || c.Stdin != "input" || c.StdinBytes != 5 || c.Target != r.Target || c.Path != "" ||
		!strings.Contains(c.Sentence, "exactly as shown") {
		t.Fatalf("ssh card %+v", c)
	}
}

// A card answered with a grant is confirmed as the grant, with its end;
// one answered alone says no grant.
func TestDecisionViewSaysTheGrant(t *testing.T) {
	until := time.Date(2026, 12, 7, 6, 22, 0, 0, time.FixedZone("x", 3600))
	d := approval.Decision{RequestID: "rq", Kind: approval.KindCall, Outcome: approval.OutcomeApproved, Surface: approval.SurfaceApp,
		Grant: "POST requests to api.example.com/repos/a/…", GrantUntil: until}
	if v := decisionView(d); v.Grant != d.Grant || v.GrantUntil != "2026-12-07T05:22:00Z" {
		t.Fatalf("with a grant: %+v", v)
	}
	d.Grant, d.GrantUntil = "", time.Time{}
	if v := decisionView(d); v.Grant != "" || v.GrantUntil != "" {
		t.Fatalf("without one: %+v", v)
	}
}
