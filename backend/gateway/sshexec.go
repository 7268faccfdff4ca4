package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// ChannelSSH names SSH commands in audit entries and cards; MethodSSH is
// their method in the journal (and in yett.status).
const (
	ChannelSSH = "ssh"
	MethodSSH  = "SSH"
)

// Bounds of ssh.exec. The frame cap (8 MiB) bounds everything already.
const (
	MaxSSHStdin       = 1 << 20
	DefaultSSHTimeout = 30 * time.Second
	maxSSHHostName    = 64
)

func sshExecTool() *mcp.Tool {
	return &mcp.Tool{
		Name: agentapi.ToolSSHExec,
		Description: "Run one command on an SSH host a person added to Yett, by the host's name in Yett. Yett connects with a key " +
			"you never see, checks the host's pinned host key, and runs the command exactly as given through the remote user's " +
			"shell: no terminal, no forwarding, no environment from you. A person approves this agent run and, unless they chose " +
			"otherwise for the host, every command. Give each logical action an idempotency_key; after a disconnect or a " +
			"STATUS_UNKNOWN answer, read the host's state (or ask yett.status) before acting again: Yett never runs a key's command twice.",
		InputSchema: json.RawMessage(`{
	"type": "object",
	"additionalProperties": false,
	"required": ["host", "command"],
	"properties": {
		"host": {"type": "string", "description": "the host's name in Yett (never an address)", "maxLength": 64},
		"command": {"type": "string", "description": "the command line, run by the remote user's shell", "maxLength": 8192},
		"stdin": {"type": "string", "description": "text for the command's standard input (at most 1 MiB)"},
		"timeout_seconds": {"type": "integer", "description": "default 30; at most the host's limit", "minimum": 1, "maximum": 3600},
		"idempotency_key": {"type": "string", "description": "names the logical action (letters, digits, . _ : -; at most 128)", "maxLength": 128}
	}
}`),
		OutputSchema: sshOutputSchema,
		Title:        "Run a command on an SSH host Yett holds the key of",
		Annotations:  writeAnnotations("Run a command on an SSH host Yett holds the key of"),
	}
}

// sshCall is a validated ssh.exec.
type sshCall struct {
	host    string
	command string
	stdin   []byte
	timeout time.Duration // 0: the default
	key     string
}

// parseSSHArgs validates ssh.exec arguments. Its errors name the field and
// the rule, never the value.
func parseSSHArgs(raw json.RawMessage) (*sshCall, error) {
	obj, err := toolArgs(raw, "host", "command", "stdin", "timeout_seconds", "idempotency_key")
	if err != nil {
		return nil, err
	}
	var c sshCall
	if c.host, err = stringArg(obj, "host"); err != nil {
		return nil, err
	}
	if !validHostName(c.host) {
		return nil, argErr("host must be the name of a host in Yett (1-%d letters, digits and - _ .)", maxSSHHostName)
	}
	if c.command, err = stringArg(obj, "command"); err != nil {
		return nil, err
	}
	if err := sshaction.CheckCommand(c.command); err != nil {
		return nil, argErr("command %s", strings.TrimPrefix(err.Error(), sshaction.ErrCommand.Error()+" "))
	}
	stdin, err := stringArg(obj, "stdin")
	if err != nil {
		return nil, err
	}
	if len(stdin) > MaxSSHStdin {
		return nil, argErr("stdin may be at most %d bytes", MaxSSHStdin)
	}
	if stdin != "" {
		c.stdin = []byte(stdin)
	}
	if v, ok := obj["timeout_seconds"]; ok && string(v) != "null" {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > int(vault.MaxSSHHostTimeout/time.Second) {
			return nil, argErr("timeout_seconds must be a whole number from 1 to %d", int(vault.MaxSSHHostTimeout/time.Second))
		}
		c.timeout = time.Duration(n) * time.Second
	}
	key, err := stringArg(obj, "idempotency_key")
	if err != nil {
		return nil, err
	}
	if c.key, err = checkKey(key, true); err != nil {
		return nil, err
	}
	return &c, nil
}

func validHostName(s string) bool {
	if s == "" || len(s) > maxSSHHostName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// lockedSSHAction names a call refused at the vault gate for the audit log:
// the host name and the idempotency key when they are well formed, and
// nothing else (not the command).
func lockedSSHAction(raw json.RawMessage) *audit.Action {
	act := &audit.Action{Channel: ChannelSSH, Operation: "exec"}
	var a struct {
		Host           string `json:"host"`
		IdempotencyKey string `json:"idempotency_key"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return act
	}
	if validHostName(a.Host) {
		act.Target = a.Host
	}
	act.IdempotencyRef = auditableKey(a.IdempotencyKey)
	return act
}

// sshExec is the decision pipeline of ssh.exec: the steps of http.request,
// with the host's own checks (a pinned host key, no unreviewed host key
// change, the command rules) made before any card or connection.
func (c *conn) sshExec(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := c.g
	// 1. Vault gate.
	if g.vault.Status().State != vault.StateUnlocked {
		return g.refuse(c, lockedSSHAction(req.Params.Arguments), "", refusedLocked), nil
	}
	// 2. A valid request naming a host in Yett.
	call, err := parseSSHArgs(req.Params.Arguments)
	if err != nil {
		return g.refuse(c, &audit.Action{Channel: ChannelSSH, Operation: "exec"}, "", &refusal{agentapi.CodeInvalid, audit.ReasonInvalidRequest, publicArgError(err)}), nil
	}
	act := &audit.Action{Channel: ChannelSSH, Operation: auditCommand(call.command), Target: call.host, IdempotencyRef: call.key}
	host, err := g.vault.SSHHosts().ByName(call.host)
	switch {
	case errors.Is(err, vault.ErrLocked):
		return g.refuse(c, act, "", refusedLocked), nil
	case err != nil:
		return g.refuse(c, act, "", &refusal{agentapi.CodeNoHost, audit.ReasonPolicy,
			"Yett has no SSH host by that name; nothing was run. The person adds hosts in Yett and tells you their names"}), nil
	}
	act.Target, act.CredentialRef = host.Name, host.ID
	// The owner inventory's word: a host nobody answers for is refused
	// while the person blocks such rows.
	if r := g.control(host.ID); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 3. The host's own checks, before any card and any connection.
	pins, r := hostPins(host)
	if r != nil {
		return g.refuse(c, act, "", r), nil
	}
	rules, err := sshaction.ParseRules(strings.Join(host.Rules, "\n"))
	if err != nil || !rules.Allows(call.command) {
		return g.refuse(c, act, "", &refusal{agentapi.CodeCommandNotAllowed, audit.ReasonCommandNotAllowed,
			"no command rule of this host allows this command, so Yett did not connect; nothing was run. The person sets a host's rules in Yett"}), nil
	}
	// 4. The run still matches the live process.
	if r := c.checkIdentity(); r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 5. A session approval; its card names this command.
	card := approval.Call{Channel: ChannelSSH, Method: "exec", Target: userAt(host), Credential: host.Name, Ref: host.ID,
		Command: call.command, Stdin: call.stdin}
	sess, r := c.session(ctx, act, &card)
	if r != nil {
		return g.refuse(c, act, "", r), nil
	}
	// 6. Per-call approval (the default for hosts), naming the exact
	// command; with "writes", for every command no read-only rule allows.
	var via *audit.Via
	if host.Approval.AsksEachCall(rules.ReadsOnly(call.command)) {
		card.Join = joinOf(call.key, sshDigest(host.Name, call))
		v, err := g.askCall(ctx, sess, card)
		if err != nil {
			return g.refuse(c, act, sess.ID, approvalRefusal(err)), nil
		}
		via = v.Audit()
	}
	timeout := min(DefaultSSHTimeout, host.Timeout)
	if call.timeout > 0 {
		timeout = min(call.timeout, host.Timeout)
	}
	facts := sshFacts(host, call)
	return g.send(ctx, c, &outgoing{
		host: host.Name, key: call.key, credRef: host.ID, ssh: facts, approvedVia: via,
		perf: &sshAction{g: g, host: host, pins: pins, call: call, timeout: timeout, epoch: sess.VaultEpoch, facts: facts},
	}, sess, act), nil
}

// hostPins reads a host's pins, or says why it cannot be connected to.
func hostPins(h vault.SSHHostView) ([]sshaction.Pin, *refusal) {
	if h.HostKeyAlert != nil {
		return nil, &refusal{agentapi.CodeHostKeyChanged, audit.ReasonHostKeyAlert, fmt.Sprintf(
			"this host presented host key %s, which is not pinned, and the person has not reviewed it yet; Yett does not connect "+
				"to it until they do. Nothing was run", h.HostKeyAlert.Fingerprint)}
	}
	var pins []sshaction.Pin
	for _, s := range h.HostKeys {
		if p, err := sshaction.ParsePin(s); err == nil {
			pins = append(pins, p)
		}
	}
	if len(pins) == 0 {
		return nil, &refusal{agentapi.CodeHostKeyNotPinned, audit.ReasonHostKeyNotPinned,
			"this host has no pinned host key yet, so Yett does not connect to it; nothing was run. The person pins it in Yett"}
	}
	return pins, nil
}

// userAt names where a command runs: user@address:port.
func userAt(h vault.SSHHostView) string {
	return h.User + "@" + net.JoinHostPort(h.Address, strconv.Itoa(h.Port))
}

// auditCommand is the command as the Activity view shows it: clipped, so a
// long script does not make a long line.
func auditCommand(cmd string) string {
	const max = 256
	if len(cmd) <= max {
		return cmd
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(cmd[cut]) {
		cut--
	}
	return cmd[:cut] + "…"
}

// sshFacts are the audit facts of a command before it runs.
func sshFacts(h vault.SSHHostView, c *sshCall) *audit.SSHFacts {
	sum := sha256.Sum256([]byte(c.command))
	f := &audit.SSHFacts{
		Host: h.Name, User: h.User, Address: net.JoinHostPort(h.Address, strconv.Itoa(h.Port)),
		Command: c.command, CommandSHA256: hex.EncodeToString(sum[:]), StdinBytes: int64(len(c.stdin)),
	}
	if len(f.Command) > audit.MaxFieldLen {
		cut := audit.MaxFieldLen
		for cut > 0 && !utf8.RuneStart(f.Command[cut]) {
			cut--
		}
		f.Command, f.CommandClipped = f.Command[:cut], true
	}
	var fps []string
	for _, s := range h.HostKeys {
		if p, err := sshaction.ParsePin(s); err == nil {
			fps = append(fps, p.Fingerprint())
		}
	}
	f.PinnedFingerprints = strings.Join(fps, " ")
	if len(f.PinnedFingerprints) > audit.MaxFieldLen {
		f.PinnedFingerprints = f.PinnedFingerprints[:audit.MaxFieldLen]
	}
	return f
}
