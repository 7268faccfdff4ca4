package approval

import (
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/procid"
)

// Each change has its own sentence (seed 000): what broke continuity, then
// what approving does, in this run's scope.
func TestChangeSentences(t *testing.T) {
	unsigned := Requester{Signer: procid.SignerUnsigned}
	signedBy := Requester{Signer: "Developer ID Application: Example (ABCDE12345)"}
	tests := []struct {
		change Change
		who    Requester
		want   string
	}{
		{ChangeFirst, unsigned, "This process has not been approved before. Approve it to use git.example.com during this run."},
		{ChangeAgentRestarted, unsigned, "An earlier run of this program ended. Approve this newly started process to use git.example.com during this run."},
		{ChangeGatewayRestarted, unsigned, "Approvals do not survive a restart of Yett. Approve this newly connected process to use git.example.com during this run."},
		{ChangeVaultLocked, unsigned, "Unlocking the vault did not restore this agent's approval. Approve it again to use git.example.com during this run."},
		{ChangeIdentityChanged, unsigned, "This process changed what it runs since it was approved, and Yett inspected it again (it is unsigned). Approve it as it is now to use git.example.com during this run."},
		{ChangeIdentityChanged, signedBy, "This process changed what it runs since it was approved, and Yett inspected it again (signed by Developer ID Application: Example (ABCDE12345)). Approve it as it is now to use git.example.com during this run."},
		{ChangeReconnected, unsigned, "The agent's connection to Yett closed and it connected again. Approve it again to use git.example.com during this run."},
		{ChangeRevoked, unsigned, "You revoked this agent's session earlier. Approve it again only if you want it to use git.example.com during this run."},
		{ChangeAnotherRun, unsigned, "This is another process of a program you approved; each process needs its own approval. Approve this one to use git.example.com during this run."},
		{Change("something new"), unsigned, "Approve this process to use git.example.com during this run."},
	}
	for _, tt := range tests {
		t.Run(string(tt.change), func(t *testing.T) {
			r := Request{Kind: KindSession, Change: tt.change, Target: "git.example.com", Who: tt.who}
			if got := r.Sentence(); got != tt.want {
				t.Errorf("sentence\n got %q\nwant %q", got, tt.want)
			}
			h := r.Headline()
			if h == "" || strings.HasSuffix(h, ".") {
				t.Errorf("headline %q", h)
			}
			// The sentence adds to the headline; it does not say it again
			// (issue 25: "The agent restarted" twice on one card).
			if strings.Contains(r.Sentence(), h) {
				t.Errorf("sentence %q repeats the headline %q", r.Sentence(), h)
			}
		})
	}
}

// A card whose continuity detail already says what changed ("an earlier
// run of this program (pid 4242) ended at 14:03:02 (it exited)") does not
// say it again in its sentence: the sentence only says what approving does.
func TestChangeSentencesAfterADetail(t *testing.T) {
	for _, tt := range []struct {
		change       Change
		detail, want string
	}{
		{ChangeAgentRestarted, "an earlier run of this program (pid 4242) ended at 14:03:02 (it exited). This is a new process",
			"Approve this newly started process to use git.example.com during this run."},
		{ChangeAnotherRun, "another run of this program (pid 4243, approved at 14:01:00) is live. This is a separate process",
			"Each process needs its own approval. Approve this one to use git.example.com during this run."},
	} {
		r := Request{Kind: KindSession, Change: tt.change, ChangeDetail: tt.detail, Target: "git.example.com"}
		if got := r.Sentence(); got != tt.want {
			t.Errorf("%s: sentence\n got %q\nwant %q", tt.change, got, tt.want)
		}
	}
}

func TestCallWords(t *testing.T) {
	r := Request{Kind: KindCall, Method: "DELETE", Target: "api.example.com/v1/repos/x", Credential: "deploy-key",
		Who: Requester{Name: "node", Executable: "/usr/bin/node", PID: 7}}
	if got, want := r.Sentence(), "node wants to send DELETE /v1/repos/x to api.example.com with the credential “deploy-key”, which needs your approval for every call."; got != want {
		t.Fatalf("sentence\n got %q\nwant %q", got, want)
	}
	if r.Headline() != "Approve this call?" || r.Scope() != "this call only" {
		t.Fatalf("%q %q", r.Headline(), r.Scope())
	}
	if s := (Request{Kind: KindSession, Who: Requester{PID: 9}}).Scope(); !strings.Contains(s, "pid 9 exits") {
		t.Fatalf("session scope %q", s)
	}
}

// A shim that asks for itself because its agent runs in another network
// namespace is named after the process that started it, never as "yett";
// the executable stays the shim's, and its words say why.
func TestRequesterInAnotherNetworkNamespace(t *testing.T) {
	rec := &procid.RunRecord{PID: 600, Name: "yett", ExePath: "/usr/bin/yett", Stdio: procid.StdioOtherNetns,
		ShimPID: 600, ShimParent: procid.ProcessFacts{PID: 500, Name: "node"}}
	r := RequesterOf(rec)
	if r.Name != "node, through yett mcp" || r.Executable != "/usr/bin/yett" || r.PID != 600 {
		t.Fatalf("requester %q %q pid %d", r.Name, r.Executable, r.PID)
	}
	text, ok := r.StdioWords()
	if ok || !strings.Contains(text, "another network namespace") || !strings.Contains(text, "node (pid 500)") {
		t.Fatalf("stdio words %v %q", ok, text)
	}
	// Any other state keeps the record's own name.
	rec.Stdio = procid.StdioNotHeld
	if r := RequesterOf(rec); r.Name != "yett" {
		t.Fatalf("not-held requester named %q", r.Name)
	}
}
