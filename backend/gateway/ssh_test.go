//go:build unix

package gateway

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/sshdtest"
)

// sshWorld is a world with a real sshd on 127.0.0.1 and one host in the
// vault whose key the sshd accepts and whose host key is pinned.
type sshWorld struct {
	*world
	srv     *sshdtest.Server
	host    vault.SSHHostView
	pair    *sshaction.KeyPair
	scratch string // where remote commands may write (they run as srv.User)
	recDir  string
	probes  int // connections sshdtest made to see sshd answer
}

// connections counts the connections sshd saw from Yett.
func (s *sshWorld) connections() int { return strings.Count(s.srv.Log(), "Connection from") - s.probes }

type sshOpts struct {
	approval  vault.Approval
	rules     []string
	record    bool
	noPins    bool
	maxOutput int64
	noReuse   bool
}

// fileRecordings keeps recordings as plain files: the gateway's side of
// recording is tested here, the sealed store in backend/sshhosts.
type fileRecordings struct{ dir string }

func (f fileRecordings) Create(id, hostID string) (io.WriteCloser, error) {
	return os.OpenFile(filepath.Join(f.dir, hostID+"-"+id+".cast"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
}

func newSSHWorld(t testing.TB, o sshOpts) *sshWorld {
	t.Helper()
	recDir := t.TempDir()
	w := newWorld(t, worldOpts{ssh: sshaction.Config{MaxOutputBytes: o.maxOutput, NoReuse: o.noReuse}, recordings: fileRecordings{recDir}})
	srv := sshdtest.Start(t)
	pair, err := sshaction.GenerateEd25519("yett:web-1")
	if err != nil {
		t.Fatal(err)
	}
	srv.Authorize(t, pair.Public)
	if o.approval == "" {
		o.approval = vault.ApprovalPerCall
	}
	nh := vault.NewSSHHost{
		Name: "web-1", Address: srv.Host, Port: srv.Port, User: srv.User,
		PrivateKey: vault.NewSecret(pair.PEM), PublicKey: pair.Public, KeyFingerprint: pair.Fingerprint,
		SSHHostSettings: vault.SSHHostSettings{Approval: o.approval, Rules: o.rules, Record: o.record, Owner: "ana"},
	}
	if !o.noPins {
		nh.HostKeys = []string{srv.HostKey}
	}
	h, err := w.vault.SSHHosts().Add(nh)
	if err != nil {
		t.Fatal(err)
	}
	sw := &sshWorld{world: w, srv: srv, host: h, pair: pair, scratch: srv.Scratch(t), recDir: recDir,
		probes: strings.Count(srv.Log(), "Connection from")}
	t.Cleanup(sw.checkKeyNeverLeaks)
	return sw
}

// keyBody is the base64 of the private key: it must appear nowhere.
func (s *sshWorld) keyBody() string { return strings.Split(string(s.pair.PEM), "\n")[1] }

func (s *sshWorld) checkKeyNeverLeaks() {
	body := s.keyBody()
	s.logMu.Lock()
	logs := s.logs.String()
	s.logMu.Unlock()
	if strings.Contains(logs, body) {
		s.t.Error("the SSH key is in the gateway's logs")
	}
	for _, dir := range []string{s.dataDir, s.recDir} {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), body) {
					s.t.Errorf("the SSH key is in %s", p)
				}
			}
			return nil
		})
	}
	cards, _ := json.Marshal(s.gw.Broker().Pending())
	if strings.Contains(string(cards), body) {
		s.t.Error("the SSH key is on a card")
	}
}

func (s *sshWorld) exec(cmd, key string) map[string]any {
	return map[string]any{"host": "web-1", "command": cmd, "idempotency_key": key}
}

// approveCall answers the pending per-call card after checking it names
// the exact command.
func (s *sshWorld) approveCall(cmd string) approval.Request {
	s.t.Helper()
	r := s.pending(approval.KindCall)
	if r.Command != cmd || r.Channel != ChannelSSH || r.Credential != "web-1" || r.Target != userAt(s.host) {
		s.t.Fatalf("call card %+v does not name the exact command %q on %s", r, cmd, userAt(s.host))
	}
	if err := s.gw.Broker().Answer(r.ID, true, "test"); err != nil {
		s.t.Fatal(err)
	}
	return r
}

// approvedSSHAgent starts an agent whose first command was approved on
// both cards.
func (s *sshWorld) approvedSSHAgent() *agent {
	s.t.Helper()
	a := startAgent(s.t, s.runDir)
	a.connect()
	wait := a.callAsync(agentapi.ToolSSHExec, s.exec("echo first", "first-1"))
	sc := s.pending(approval.KindSession)
	if sc.Command != "echo first" || sc.Channel != ChannelSSH {
		s.t.Fatalf("session card %+v does not name the command", sc)
	}
	s.approveNext()
	if s.host.Approval == vault.ApprovalPerCall {
		s.approveCall("echo first")
	}
	mustContain(s.t, wait(), `"stdout":"first\n"`)
	return a
}

func sshAnswerOf(t *testing.T, r agentReply) sshAnswer {
	t.Helper()
	text := r.Text
	if i := strings.IndexByte(text, '{'); i > 0 {
		text = text[i:]
	}
	var ans sshAnswer
	if err := json.Unmarshal([]byte(text), &ans); err != nil {
		t.Fatalf("answer %q: %v", r.Text, err)
	}
	return ans
}

func TestSSHExecRunsAndReports(t *testing.T) {
	s := newSSHWorld(t, sshOpts{maxOutput: 128 << 10})
	a := s.approvedSSHAgent()
	run := func(args map[string]any) agentReply {
		t.Helper()
		wait := a.callAsync(agentapi.ToolSSHExec, args)
		s.approveCall(args["command"].(string))
		return wait()
	}

	r := run(s.exec("echo out; echo err >&2; exit 3", "exit-3"))
	ans := sshAnswerOf(t, r)
	if !r.IsError || ans.ExitCode == nil || *ans.ExitCode != 3 || ans.Stdout != "out\n" || ans.Stderr != "err\n" {
		t.Fatalf("exit 3: %+v %s", ans, r.Text)
	}
	if want, _ := sshaction.ParsePin(s.srv.HostKey); ans.HostKeyFingerprint != want.Fingerprint() || ans.DurationMS < 0 {
		t.Fatalf("host key %q", ans.HostKeyFingerprint)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "exit-3"}), "COMPLETED exit=3")

	r = run(s.exec("kill -TERM $$", "signal-1"))
	if ans := sshAnswerOf(t, r); !r.IsError || ans.Signal != "TERM" || ans.ExitCode != nil {
		t.Fatalf("signal: %s", r.Text)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "signal-1"}), "COMPLETED signal=TERM")

	args := s.exec("wc -c", "stdin-1")
	args["stdin"] = strings.Repeat("y", 5000)
	r = run(args)
	if ans := sshAnswerOf(t, r); r.IsError || strings.TrimSpace(ans.Stdout) != "5000" {
		t.Fatalf("stdin: %s", r.Text)
	}

	r = run(s.exec("yes flood", "flood-1"))
	ans = sshAnswerOf(t, r)
	if !strings.HasPrefix(r.Text, agentapi.CodeStatusUnknown) || !ans.Truncated || ans.EndedBy != "output_cap" || len(ans.Stdout) != 128<<10 {
		t.Fatalf("flood: truncated %v ended %q kept %d: %.200s", ans.Truncated, ans.EndedBy, len(ans.Stdout), r.Text)
	}

	// The audit log has the exact command on the intent and the exit code
	// on the result.
	ev := waitAudit(t, s.world, "result of exit-3", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.Action != nil && e.Action.IdempotencyRef == "exit-3"
	})
	if ev.Result.Status != 3 || ev.SSH == nil || ev.SSH.Command != "echo out; echo err >&2; exit 3" || ev.SSH.Host != "web-1" || ev.SSH.HostFingerprint == "" {
		t.Fatalf("audit result %+v %+v", ev.Result, ev.SSH)
	}
}

// A connection cut after the command started: the outcome is unknown, the
// command is not run again for its key, and yett.status says so.
func TestSSHBrokenConnectionIsStatusUnknown(t *testing.T) {
	s := newSSHWorld(t, sshOpts{approval: vault.ApprovalSession})
	a := s.approvedSSHAgent()
	marker := filepath.Join(s.scratch, "ran")
	cmd := "echo x >> " + marker + "; echo started; sleep 30"
	go func() {
		for deadline := time.Now().Add(testWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(marker); err == nil {
				s.srv.KillSessions(t)
				return
			}
		}
	}()
	r := a.call(agentapi.ToolSSHExec, s.exec(cmd, "cut-1"))
	if !strings.HasPrefix(r.Text, agentapi.CodeStatusUnknown) || !strings.Contains(r.Text, "connection broke") || !strings.Contains(r.Text, "cut-1") {
		t.Fatalf("cut: %s", r.Text)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "cut-1"}), agentapi.CodeStatusUnknown)
	// A new connection of the agent (the same process reconnecting is a new
	// run of its own; here the same agent asks again) sends the same call:
	// it is answered from the journal and never run again.
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec(cmd, "cut-1")), agentapi.CodeStatusUnknown)
	b := startAgent(t, s.runDir)
	b.connect()
	wait := b.callAsync(agentapi.ToolSSHExec, s.exec(cmd, "cut-1"))
	s.approveNext()
	mustContain(t, wait(), agentapi.CodeStatusUnknown)
	mustContain(t, b.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "cut-1"}), agentapi.CodeStatusUnknown)
	time.Sleep(500 * time.Millisecond)
	if b, _ := os.ReadFile(marker); string(b) != "x\n" {
		t.Fatalf("the command ran %d times", strings.Count(string(b), "x"))
	}
	waitAudit(t, s.world, "connection_lost", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.Reason == audit.ReasonConnectionLost && e.Result.Class == audit.ResultTransport
	})
}

// A vault lock ends a running command at once; the audit log says why;
// nothing runs after the unlock without a new call.
func TestSSHVaultLockEndsTheCommand(t *testing.T) {
	s := newSSHWorld(t, sshOpts{approval: vault.ApprovalSession})
	a := s.approvedSSHAgent()
	pidFile, after := filepath.Join(s.scratch, "pid"), filepath.Join(s.scratch, "after")
	cmd := "echo $$ > " + pidFile + "; sleep 30; touch " + after
	wait := a.callAsync(agentapi.ToolSSHExec, s.exec(cmd, "long-1"))
	var pid int
	for deadline := time.Now().Add(testWait); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the command did not start")
	}
	locked := time.Now()
	s.lock()
	r := wait()
	if !strings.HasPrefix(r.Text, agentapi.CodeStatusUnknown) || !strings.Contains(r.Text, "vault was locked") || !strings.Contains(r.Text, `"ended_by":"vault_lock"`) {
		t.Fatalf("lock: %s", r.Text)
	}
	if d := time.Since(locked); d > 10*time.Second {
		t.Fatalf("the answer came %v after the lock", d)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the remote command still runs after the lock")
		}
	}
	ev := waitAudit(t, s.world, "cut by lock", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.Reason == audit.ReasonCutByLock && e.Action != nil && e.Action.IdempotencyRef == "long-1"
	})
	if ev.SSH == nil || ev.SSH.HangupRefused {
		t.Fatalf("the result says the hangup was refused: %+v", ev.SSH)
	}
	s.unlock()
	time.Sleep(*settleWait)
	if _, err := os.Stat(after); err == nil {
		t.Fatal("the command went on after the lock")
	}
	// After the unlock, the same call needs a new approval and is not run
	// again: its key names a call whose outcome is unknown.
	wait = a.callAsync(agentapi.ToolSSHExec, s.exec(cmd, "long-1"))
	r = wait()
	if !strings.Contains(r.Text, agentapi.CodeReauth) {
		t.Fatalf("after unlock: %s", r.Text)
	}
	s.approveNext()
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec(cmd, "long-1")), agentapi.CodeStatusUnknown)
	if b, _ := os.ReadFile(pidFile); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Fatal("the command ran again")
	}
}

// Refusals before any connection: an unknown host, a command outside the
// host's rules, a host without a pinned key, and calls while locked.
func TestSSHRefusedBeforeConnecting(t *testing.T) {
	s := newSSHWorld(t, sshOpts{rules: []string{"exact: uptime", "prefix: ls"}})
	a := startAgent(t, s.runDir)
	a.connect()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"host": "nope", "command": "uptime"}, agentapi.CodeNoHost},
		{map[string]any{"host": "10.0.0.1", "command": "uptime"}, agentapi.CodeNoHost},
		{map[string]any{"host": "root@web-1", "command": "uptime"}, agentapi.CodeInvalid},
		{s.exec("ls; rm -rf ~", "r1"), agentapi.CodeCommandNotAllowed},
		{s.exec("uptime && id", "r2"), agentapi.CodeCommandNotAllowed},
		{s.exec("echo \u202e", "r3"), agentapi.CodeInvalid},
		{map[string]any{"host": "web-1", "command": "uptime", "env": map[string]string{"A": "b"}}, agentapi.CodeInvalid},
	} {
		r := a.call(agentapi.ToolSSHExec, tc.args)
		if !strings.HasPrefix(r.Text, tc.want) {
			t.Errorf("%v: %s", tc.args, r.Text)
		}
	}
	if n := s.connections(); n != 0 {
		t.Fatalf("sshd saw %d connections:\n%s", n, s.srv.Log())
	}
	if len(s.gw.Broker().Pending()) != 0 {
		t.Fatal("a refused call raised a card")
	}
	s.lock()
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec("uptime", "locked-1")), agentapi.CodeLocked)
	ev := waitAudit(t, s.world, "locked refusal", func(e audit.Event) bool {
		return e.Type == audit.EventActionDenied && e.Reason == audit.ReasonVaultLocked && e.Action != nil && e.Action.Channel == ChannelSSH
	})
	if ev.Action.Target != "web-1" || ev.Action.IdempotencyRef != "locked-1" || ev.Action.Operation != "exec" {
		t.Fatalf("locked refusal names %+v (never the command)", ev.Action)
	}
}

func TestSSHHostWithoutPinIsNotConnected(t *testing.T) {
	s := newSSHWorld(t, sshOpts{noPins: true})
	a := startAgent(t, s.runDir)
	a.connect()
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec("uptime", "nopin-1")), agentapi.CodeHostKeyNotPinned)
	if s.connections() != 0 {
		t.Fatal("sshd saw a connection")
	}
}

// A changed host key is refused before authentication, named to the agent
// and on the host, audited with both fingerprints; later calls are refused
// before connecting until the person reviews the host.
func TestSSHChangedHostKeyIsRefused(t *testing.T) {
	s := newSSHWorld(t, sshOpts{approval: vault.ApprovalSession})
	a := s.approvedSSHAgent()
	authBefore := strings.Count(s.srv.Log(), "Accepted publickey")
	s.srv.Restart(t, true)
	r := a.call(agentapi.ToolSSHExec, s.exec("touch "+filepath.Join(s.scratch, "mitm"), "mitm-1"))
	newPin, _ := sshaction.ParsePin(s.srv.HostKey)
	if !strings.HasPrefix(r.Text, agentapi.CodeHostKeyChanged) || !strings.Contains(r.Text, newPin.Fingerprint()) {
		t.Fatalf("changed key: %s", r.Text)
	}
	if strings.Count(s.srv.Log(), "Accepted publickey") != authBefore || strings.Contains(s.srv.Log(), "Postponed publickey") && strings.Count(s.srv.Log(), "Postponed publickey") > authBefore {
		t.Fatalf("the key was offered to a host that is not the pinned one:\n%s", s.srv.Log())
	}
	if _, err := os.Stat(filepath.Join(s.scratch, "mitm")); err == nil {
		t.Fatal("the command ran")
	}
	h, _ := s.vault.SSHHosts().ByName("web-1")
	if h.HostKeyAlert == nil || h.HostKeyAlert.Fingerprint != newPin.Fingerprint() {
		t.Fatalf("the host does not name the presented key: %+v", h.HostKeyAlert)
	}
	ev := waitAudit(t, s.world, "host key changed", func(e audit.Event) bool { return e.Type == audit.EventSSHHostKeyChanged })
	oldPin, _ := sshaction.ParsePin(s.host.HostKeys[0])
	if ev.SSH == nil || ev.SSH.HostFingerprint != newPin.Fingerprint() || ev.SSH.PinnedFingerprints != oldPin.Fingerprint() {
		t.Fatalf("audit %+v", ev.SSH)
	}
	mustContain(t, a.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "mitm-1"}), agentapi.CodeRetrySafe)
	conns := s.connections()
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec("uptime", "mitm-2")), agentapi.CodeHostKeyChanged)
	if s.connections() != conns {
		t.Fatal("a host under review was connected to")
	}
}

// The same agent-process rules as HTTP: another process of the agent is
// asked again, and the per-call card names the exact command.
func TestSSHRestartedAgentIsAskedAgain(t *testing.T) {
	s := newSSHWorld(t, sshOpts{})
	a := s.approvedSSHAgent()
	a.kill()
	b := startAgent(t, s.runDir)
	b.connect()
	wait := b.callAsync(agentapi.ToolSSHExec, s.exec("echo again", "again-1"))
	card := s.pending(approval.KindSession)
	if card.Change != approval.ChangeAgentRestarted || card.Command != "echo again" {
		t.Fatalf("card %+v", card)
	}
	if err := s.gw.Broker().Answer(card.ID, false, "test"); err != nil {
		t.Fatal(err)
	}
	mustContain(t, wait(), agentapi.CodeDenied)
	mustContain(t, b.call(agentapi.ToolStatus, map[string]string{"idempotency_key": "again-1"}), agentapi.CodeApprovalRequired)
}

func TestSSHRecordingIsKept(t *testing.T) {
	s := newSSHWorld(t, sshOpts{approval: vault.ApprovalSession, record: true})
	s.approvedSSHAgent()
	files, _ := filepath.Glob(filepath.Join(s.recDir, s.host.ID+"-*.cast"))
	if len(files) != 1 {
		t.Fatalf("recordings %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.Contains(lines[0], `"version":2`) || !strings.Contains(lines[0], `"command":"echo first"`) || !strings.Contains(string(b), `"o", "first\n"`) {
		t.Fatalf("recording:\n%s", b)
	}
	ev := waitAudit(t, s.world, "recorded result", func(e audit.Event) bool {
		return e.Type == audit.EventActionResult && e.SSH != nil && e.SSH.Recording != ""
	})
	if !strings.HasSuffix(files[0], ev.SSH.Recording+".cast") {
		t.Fatalf("audit names recording %q, file %s", ev.SSH.Recording, files[0])
	}
}

// Reads pass, writes ask, on an SSH host: with the approval "writes", a
// command a read-only rule allows runs on the run's session approval, and
// any other command the rules allow gets its own card.
func TestSSHReadsPassWritesAsk(t *testing.T) {
	s := newSSHWorld(t, sshOpts{approval: vault.ApprovalWrites, rules: []string{"read-only prefix: echo", "exact: true"}})
	a := s.approvedSSHAgent() // "echo first": a read, no call card
	mustContain(t, a.call(agentapi.ToolSSHExec, s.exec("echo again", "read-2")), `"stdout":"again\n"`)
	if p := s.gw.Broker().Pending(); len(p) != 0 {
		t.Fatalf("a read raised a card: %+v", p)
	}
	wait := a.callAsync(agentapi.ToolSSHExec, s.exec("true", "write-1"))
	card := s.pending(approval.KindCall)
	if card.Command != "true" {
		t.Fatalf("card %+v", card)
	}
	s.gw.Broker().Answer(card.ID, false, "test")
	mustContain(t, wait(), "DENIED")
	wait = a.callAsync(agentapi.ToolSSHExec, s.exec("true", "write-2"))
	s.approveCall("true")
	mustContain(t, wait(), `"exit_code":0`)
}
