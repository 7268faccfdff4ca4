package sshhosts

import (
	"strings"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/vault"
)

// PinView is one pinned host key as a person reads it.
type PinView struct {
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
	Key         string `json:"key"` // "type base64", as a known_hosts line ends
}

// AlertView is the key a host presented instead of its pins.
type AlertView struct {
	Fingerprint string    `json:"fingerprint"`
	Type        string    `json:"type"`
	At          time.Time `json:"at"`
}

// HostView is a host as the person and the owner inventory see it: never
// its private key.
type HostView struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	User    string `json:"user"`
	// PublicKey is the authorized_keys line of the host's key in Yett.
	PublicKey      string         `json:"public_key"`
	KeyFingerprint string         `json:"key_fingerprint"`
	Pins           []PinView      `json:"pins"`
	Alert          *AlertView     `json:"alert,omitempty"`
	Approval       vault.Approval `json:"approval"`
	Rules          string         `json:"rules"` // the rules' text, one per line
	Timeout        time.Duration  `json:"timeout"`
	Record         bool           `json:"record"`
	Owner          string         `json:"owner"`
	BackupRevoker  string         `json:"backup_revoker"`
	// Problems say in words what about the host itself needs the
	// person's attention (its host keys, its rules). Whether someone
	// answers for it is the owner inventory's verdict, not the host's.
	Problems  []string  `json:"problems"`
	CreatedAt time.Time `json:"created_at"`
	Version   uint64    `json:"version"`
}

func viewOf(h vault.SSHHostView) HostView {
	v := HostView{
		ID: h.ID, Name: h.Name, Address: h.Address, Port: h.Port, User: h.User, PublicKey: h.PublicKey,
		KeyFingerprint: h.KeyFingerprint, Pins: []PinView{}, Approval: h.Approval, Timeout: h.Timeout, Record: h.Record,
		Owner: h.Owner, BackupRevoker: h.BackupRevoker,
		Problems: []string{}, CreatedAt: h.CreatedAt, Version: h.Version,
	}
	for _, s := range h.HostKeys {
		if p, err := sshaction.ParsePin(s); err == nil {
			v.Pins = append(v.Pins, PinView{Type: p.Type(), Fingerprint: p.Fingerprint(), Key: p.String()})
		}
	}
	if len(h.Rules) > 0 {
		v.Rules = strings.Join(h.Rules, "\n") + "\n"
		if rs, err := sshaction.ParseRules(v.Rules); err == nil && rs.HasPrefixRules() && h.Approval == vault.ApprovalSession {
			v.Problems = append(v.Problems, "approved once per session, with prefix rules: in an approved session every command a prefix rule allows runs without asking you; ask for every command, or keep only exact rules")
		}
	}
	if a := h.HostKeyAlert; a != nil {
		typ := ""
		if p, err := sshaction.ParsePin(a.Presented); err == nil {
			typ = p.Type()
		}
		v.Alert = &AlertView{Fingerprint: a.Fingerprint, Type: typ, At: a.At}
		v.Problems = append(v.Problems, "the host presented host key "+a.Fingerprint+", which is not pinned: Yett refuses to connect until you check the host and pin a key again")
	}
	if len(v.Pins) == 0 && v.Alert == nil {
		v.Problems = append(v.Problems, "no pinned host key: agents cannot use this host until you pin one")
	}
	return v
}
