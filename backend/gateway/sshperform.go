package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/vault"
)

// Recordings keeps the session recordings of hosts that ask for them
// (backend/sshhosts): a writer per call, sealed as it is written.
type Recordings interface {
	Create(requestID, hostID string) (io.WriteCloser, error)
}

// sshAction is one SSH command: the host as the person approved it (its
// record's version), its pins, and the key lent for the one connection
// that may need it.
type sshAction struct {
	g       *Gateway
	host    vault.SSHHostView
	pins    []sshaction.Pin
	call    *sshCall
	timeout time.Duration
	epoch   uint64
	facts   *audit.SSHFacts
	key     *onceSecret
}

func (a *sshAction) lend(context.Context) *refusal {
	// The one read of the key, for the very host record the approval
	// covered: an edit since (a new pin, other rules) means nothing runs.
	sec, err := a.g.vault.SSHHosts().KeyOf(a.host.ID, a.host.Version)
	if err != nil {
		if errors.Is(err, vault.ErrLocked) {
			return refusedStateChanged
		}
		return &refusal{agentapi.CodeUnavailable, audit.ReasonCredentialChanged,
			"the host was changed or removed in Yett while this call waited; nothing was run"}
	}
	a.key = &onceSecret{s: sec}
	return nil
}

func (a *sshAction) release() {
	if a.key != nil {
		a.key.wipe()
	}
}

// describe: the journal keeps the host and the digest of the command, not
// the command itself (the journal is not encrypted; the audit log holds
// the command).
func (a *sshAction) describe(in *journal.Intent) {
	in.Method = MethodSSH
	in.RequestBytes = int64(len(a.call.command) + len(a.call.stdin))
	in.RequestSHA256 = sshDigest(a.host.Name, a.call)
}

// sshDigest is the digest of an SSH command as the journal keeps it.
func sshDigest(host string, call *sshCall) string {
	return requestDigest(ChannelSSH, strings.ToLower(host), call.command, string(call.stdin))
}

func (a *sshAction) perform(dctx context.Context, d *dispatchedCall) *mcp.CallToolResult {
	g := a.g
	rec, closeRec, r := a.startRecording(d)
	if r != nil {
		return d.notSent(r)
	}
	h := sshaction.Host{ID: a.host.ID, Version: a.host.Version, Address: a.host.Address, Port: a.host.Port, User: a.host.User, Pins: a.pins}
	key := epochSecret{v: g.vault, epoch: a.epoch, src: a.key}
	res, err := g.ssh.Exec(dctx, h, key, sshaction.Command{Line: a.call.command, Stdin: a.call.stdin, Timeout: a.timeout, Record: rec})
	kept := closeRec()
	if errors.Is(err, sshaction.ErrNotStarted) {
		return a.notRun(dctx, d, err)
	}
	f := *a.facts
	if res != nil {
		f.HostFingerprint, f.Signal, f.Truncated, f.HangupRefused = res.HostKey, res.Signal, res.Truncated, res.HangupRefused
	}
	if kept {
		f.Recording = d.id
	}
	ans := a.answer(d, res)
	switch {
	case res != nil && res.Ended == sshaction.EndedCancelled:
		d.outcome(journal.Result{Class: string(audit.ResultUnknown)}, a.auditResult(audit.ResultUnknown, res), audit.ReasonCutByLock, &f)
		return a.unknown(d, ans, "the vault was locked while the command ran: Yett closed the session at once and %s. "+
			"The command may have done part of its work or all of it", hangupWords(res))
	case err != nil:
		d.outcome(journal.Result{Class: string(audit.ResultTransport)}, a.auditResult(audit.ResultTransport, res), audit.ReasonConnectionLost, &f)
		return a.unknown(d, ans, "the connection broke after the command was sent; it may not have run, or run in part or in full")
	case res.Ended == sshaction.EndedTimeout:
		d.outcome(journal.Result{Class: string(audit.ResultUnknown)}, a.auditResult(audit.ResultUnknown, res), audit.ReasonTimedOut, &f)
		return a.unknown(d, ans, "the command did not finish within %v: Yett ended it and %s", a.timeout, hangupWords(res))
	case res.Ended == sshaction.EndedOutputCap:
		d.outcome(journal.Result{Class: string(audit.ResultUnknown)}, a.auditResult(audit.ResultUnknown, res), audit.ReasonOutputCap, &f)
		return a.unknown(d, ans, "the command's output reached Yett's cap: Yett kept the start of it, ended the command and %s", hangupWords(res))
	}
	sum := sha256.Sum256(append(append([]byte(nil), res.Stdout...), res.Stderr...))
	jr := journal.Result{Status: res.ExitCode, Class: string(audit.ResultSuccess), ResponseBytes: int64(len(res.Stdout) + len(res.Stderr)),
		ResponseSHA256: hex.EncodeToString(sum[:]), Truncated: res.Truncated}
	class := audit.ResultSuccess
	switch {
	case !res.Exited:
		class, jr.Class, jr.Status = audit.ResultServerError, classSignal, signalStatus(res.Signal)
	case res.ExitCode != 0:
		class, jr.Class = audit.ResultServerError, string(audit.ResultServerError)
	}
	d.outcome(jr, a.auditResult(class, res), "", &f)
	code := fmt.Sprintf("%s exit=%d", agentapi.CodeCompleted, res.ExitCode)
	if !res.Exited {
		code = fmt.Sprintf("%s signal=%s", agentapi.CodeCompleted, res.Signal)
	}
	ans.outcome = d.said(code)
	return toolAnswer("", ans, class != audit.ResultSuccess)
}

// notRun answers a command that provably did not run. A host key that is
// not pinned is also recorded on the host (its card names it until the
// person reviews it) and audited with both fingerprints.
func (a *sshAction) notRun(dctx context.Context, d *dispatchedCall, err error) *mcp.CallToolResult {
	var hk *sshaction.HostKeyError
	switch {
	case errors.As(err, &hk):
		if _, aerr := a.g.vault.SSHHosts().Alert(a.host.ID, vault.HostKeyAlert{Presented: hk.Presented.String(), Fingerprint: hk.Fingerprint, At: time.Now()}); aerr != nil {
			a.g.log.Error("could not record a changed host key on its host", "host", a.host.ID)
		}
		f := *a.facts
		f.HostFingerprint = hk.Fingerprint
		a.g.audit.Append(context.WithoutCancel(d.ctx), audit.Event{
			Type: audit.EventSSHHostKeyChanged, Time: time.Now().UTC(), BootID: a.g.bootID, VaultEpoch: d.sess.VaultEpoch,
			SessionID: d.sess.ID, Action: d.act, Reason: audit.ReasonHostKeyChanged, SSH: &f,
		})
		return d.notSent(&refusal{agentapi.CodeHostKeyChanged, audit.ReasonHostKeyChanged, fmt.Sprintf(
			"the host presented host key %s, which is not the key pinned in Yett (%s). Yett refused it before authenticating: "+
				"nothing was run and Yett's key signed nothing. The person must check the host and pin its key again in Yett",
			hk.Fingerprint, a.facts.PinnedFingerprints)})
	case dctx.Err() != nil:
		return d.notSent(&refusal{agentapi.CodeReauth + " " + agentapi.ReauthVaultStateChanged, audit.ReasonVaultStateChanged,
			"the vault was locked before the command was sent; nothing was run"})
	case errors.Is(err, sshaction.ErrAuth):
		return d.notSent(&refusal{agentapi.CodeRefused, audit.ReasonSSHAuthFailed, fmt.Sprintf(
			"the host refused Yett's key for user %s; nothing was run. The person can check that the host's authorized_keys holds the public key Yett shows for this host",
			a.host.User)})
	case errors.Is(err, sshaction.ErrUnreachable), errors.Is(err, sshaction.ErrHandshake):
		return d.notSent(&refusal{agentapi.CodeUnavailable, audit.ReasonSSHUnreachable,
			"Yett could not connect to the host; nothing was run. " + agentapi.CodeRetrySafe})
	case errors.Is(err, sshaction.ErrNoKey):
		return d.notSent(&refusal{agentapi.CodeUnavailable, audit.ReasonCredentialChanged,
			"the host's key became unavailable (the vault was locked); nothing was run"})
	case errors.Is(err, sshaction.ErrNoPins):
		return d.notSent(&refusal{agentapi.CodeHostKeyNotPinned, audit.ReasonHostKeyNotPinned,
			"this host has no pinned host key, so Yett did not connect; nothing was run"})
	}
	return d.notSent(&refusal{agentapi.CodeRefused, audit.ReasonSSHRefused, "the host refused to start the command; nothing was run"})
}

func (a *sshAction) auditResult(class audit.ResultClass, res *sshaction.Result) audit.Result {
	r := audit.Result{Class: class}
	if res != nil {
		r.Bytes, r.DurationMS = int64(len(res.Stdout)+len(res.Stderr)), res.Duration.Milliseconds()
		if res.Exited {
			r.Status = res.ExitCode
		}
	}
	return r
}

// sshAnswer is what the agent reads of a command that ran.
type sshAnswer struct {
	outcome
	Host     string `json:"host"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// EndedBy says Yett ended the command: "timeout", "output_cap" or
	// "vault_lock".
	EndedBy            string `json:"ended_by,omitempty"`
	Stdout             string `json:"stdout"`
	Stderr             string `json:"stderr"`
	StdoutBase64       string `json:"stdout_base64,omitempty"`
	StderrBase64       string `json:"stderr_base64,omitempty"`
	Truncated          bool   `json:"truncated"`
	HostKeyFingerprint string `json:"host_key_fingerprint,omitempty"`
	DurationMS         int64  `json:"duration_ms"`
}

func (a *sshAction) answer(d *dispatchedCall, res *sshaction.Result) sshAnswer {
	ans := sshAnswer{outcome: d.said(agentapi.CodeStatusUnknown), Host: a.host.Name}
	if res == nil {
		return ans
	}
	if res.Exited && res.Ended == "" {
		code := res.ExitCode
		ans.ExitCode = &code
	}
	ans.Signal = res.Signal
	switch res.Ended {
	case sshaction.EndedCancelled:
		ans.EndedBy = "vault_lock"
	case sshaction.EndedTimeout, sshaction.EndedOutputCap:
		ans.EndedBy = string(res.Ended)
	}
	ans.Stdout, ans.StdoutBase64 = textOrBase64(res.Stdout)
	ans.Stderr, ans.StderrBase64 = textOrBase64(res.Stderr)
	ans.Truncated, ans.HostKeyFingerprint, ans.DurationMS = res.Truncated, res.HostKey, res.Duration.Milliseconds()
	return ans
}

func textOrBase64(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return "", base64.StdEncoding.EncodeToString(b)
}

// unknown answers a command whose effects are not known, with what it
// printed before Yett lost or ended it.
func (a *sshAction) unknown(d *dispatchedCall, ans sshAnswer, format string, args ...any) *mcp.CallToolResult {
	ans.outcome = d.said(agentapi.CodeStatusUnknown)
	ans.Message = fmt.Sprintf(format+". Read the host's state before acting again; sending this call again with "+
		"idempotency_key %s does not run it again", append(args, d.key)...)
	return toolAnswer(agentapi.CodeStatusUnknown+": "+ans.Message+"\n", ans, true)
}

func hangupWords(res *sshaction.Result) string {
	if res.HangupRefused {
		return "asked the host to send it SIGHUP, which the host refused (OpenSSH refuses it for root logins): it may still be running"
	}
	return "the host sent it SIGHUP"
}

// startRecording opens the host's recording of this call, if it asks for
// one. A host that asks to be recorded is not served unrecorded. closeRec
// says whether the recording was kept whole.
func (a *sshAction) startRecording(d *dispatchedCall) (rec sshaction.Recorder, closeRec func() bool, r *refusal) {
	none := func() bool { return false }
	if !a.host.Record {
		return nil, none, nil
	}
	notKept := &refusal{agentapi.CodeUnavailable, audit.ReasonPolicy,
		"this host's sessions are recorded, and Yett could not start the recording; nothing was run"}
	if a.g.cfg.Recordings == nil {
		return nil, none, notKept
	}
	w, err := a.g.cfg.Recordings.Create(d.id, a.host.ID)
	if err != nil {
		a.g.log.Error("could not start a session recording", "host", a.host.ID)
		return nil, none, notKept
	}
	cast, err := sshaction.NewCast(w, sshaction.CastHeader{Command: a.call.command, Title: userAt(a.host)}, time.Now())
	if err != nil {
		w.Close()
		return nil, none, notKept
	}
	return cast, func() bool { return w.Close() == nil && cast.Err() == nil }, nil
}

// classSignal is the journal's result class of a command a signal ended;
// its status is 128 plus the signal's number where the name is a standard
// one (signalStatus), as a shell reports it.
const classSignal = "signal"

var signalNumbers = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "ABRT": 6, "FPE": 8, "KILL": 9,
	"USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15}

func signalStatus(name string) int {
	if n, ok := signalNumbers[name]; ok {
		return 128 + n
	}
	return 0
}

func signalName(status int) string {
	for name, n := range signalNumbers {
		if 128+n == status {
			return name
		}
	}
	return "other"
}
