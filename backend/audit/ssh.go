package audit

// SSH hosts and commands. A host is an authorization like an OAuth
// account: adding, editing and removing one are vault changes
// (vault_changed, recorded by the composition root); every pin of its host
// key is an event of its own, with the fingerprint and how it was pinned;
// every command is a call (channel "ssh") whose entries carry SSHFacts.
const (
	EventSSHHostKeyPinned EventType = "ssh_host_key_pinned"
	// EventSSHHostKeyChanged (event.go): a host presented a host key that
	// is not pinned; SSHFacts names the presented and the pinned keys.
)

func init() { knownTypes[EventSSHHostKeyPinned] = true }

// Reasons of SSH calls and host events.
const (
	// ReasonHostKeyChanged: the host presented a key that is not pinned;
	// nothing was run and the key signed nothing.
	ReasonHostKeyChanged Reason = "host_key_changed"
	// ReasonHostKeyNotPinned: the host has no pinned key yet.
	ReasonHostKeyNotPinned Reason = "host_key_not_pinned"
	// ReasonHostKeyAlert: the host presented an unpinned key before and the
	// person has not reviewed it; refused before connecting.
	ReasonHostKeyAlert Reason = "host_key_alert"
	// ReasonCommandNotAllowed: no command rule of the host allows it;
	// refused before connecting.
	ReasonCommandNotAllowed Reason = "command_not_allowed"
	// ReasonSSHUnreachable, ReasonSSHAuthFailed, ReasonSSHRefused: the
	// connection, the key or the session was refused; nothing was run.
	ReasonSSHUnreachable Reason = "ssh_unreachable"
	ReasonSSHAuthFailed  Reason = "ssh_auth_failed"
	ReasonSSHRefused     Reason = "ssh_refused"
	// ReasonTimedOut and ReasonOutputCap: Yett ended the command (SIGHUP,
	// then closed the session) at its timeout, or when its output reached
	// the cap.
	ReasonTimedOut  Reason = "timed_out"
	ReasonOutputCap Reason = "output_cap"
	// ReasonConnectionLost: the connection broke after the command was
	// sent; whether it ran is unknown.
	ReasonConnectionLost Reason = "connection_lost"
	// How a host key came to be pinned (ssh_host_key_pinned).
	ReasonTrustOnFirstUse Reason = "trust_on_first_use"
	ReasonKnownHosts      Reason = "known_hosts"
	ReasonPasted          Reason = "pasted"
)

// SSHFacts describe an SSH call or host event: which host, which command,
// which host key. Never the client key, never output.
type SSHFacts struct {
	Host    string `json:"host"`              // the host's name in Yett
	User    string `json:"user,omitempty"`    // who the command runs as
	Address string `json:"address,omitempty"` // host:port
	// Command is the exact command, clipped to the field bound (then
	// CommandClipped is set); CommandSHA256 is of the whole of it.
	Command        string `json:"command,omitempty"`
	CommandClipped bool   `json:"command_clipped,omitempty"`
	CommandSHA256  string `json:"command_sha256,omitempty"`
	StdinBytes     int64  `json:"stdin_bytes,omitempty"`
	// HostFingerprint is the host key verified (a call), pinned
	// (ssh_host_key_pinned) or presented instead of a pin
	// (ssh_host_key_changed, with the pins in PinnedFingerprints).
	HostFingerprint    string `json:"host_fingerprint,omitempty"`
	PinnedFingerprints string `json:"pinned_fingerprints,omitempty"` // space separated
	// How the command ended, besides the result's exit code: the signal
	// that ended it, output cut at the cap, a SIGHUP the host refused to
	// deliver (the command may have run on), and the recording kept.
	Signal        string `json:"signal,omitempty"`
	Truncated     bool   `json:"truncated,omitempty"`
	HangupRefused bool   `json:"hangup_refused,omitempty"`
	Recording     string `json:"recording,omitempty"` // the recording's id
}

// fields adds the facts' strings to what validate bounds.
func (f *SSHFacts) fields(c *fieldCheck) {
	if f == nil {
		return
	}
	c.f("ssh.host", f.Host)
	c.f("ssh.user", f.User)
	c.f("ssh.address", f.Address)
	c.f("ssh.command", f.Command)
	c.f("ssh.command_sha256", f.CommandSHA256)
	c.f("ssh.host_fingerprint", f.HostFingerprint)
	c.f("ssh.pinned_fingerprints", f.PinnedFingerprints)
	c.f("ssh.signal", f.Signal)
	c.f("ssh.recording", f.Recording)
}

// MaxFieldLen is the bound of every string field of an event.
const MaxFieldLen = maxFieldLen
