package app

import (
	"time"

	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
)

// SSHSettingsForm is what a person sets on a host besides where it is and
// its key.
type SSHSettingsForm struct {
	Approval string `json:"approval" enum:"ApprovalMode"` // "per_call" (the default) or "session"
	// Rules is the command rules' text: one per line, "exact: ..." or
	// "prefix: ..."; empty allows any command (each approved).
	Rules          string `json:"rules"`
	TimeoutSeconds int    `json:"timeoutSeconds"` // 0: the default
	Record         bool   `json:"record"`
	Owner          string `json:"owner"`
	BackupRevoker  string `json:"backupRevoker"`
}

func (f SSHSettingsForm) toSettings() sshhosts.Settings {
	return sshhosts.Settings{Approval: vault.Approval(f.Approval), Rules: f.Rules,
		Timeout: time.Duration(f.TimeoutSeconds) * time.Second, Record: f.Record, Owner: f.Owner, BackupRevoker: f.BackupRevoker}
}

// SSHHostForm adds a host. PrivateKey empty: Yett makes an Ed25519 key.
type SSHHostForm struct {
	Name       string          `json:"name"`
	Address    string          `json:"address"`
	Port       int             `json:"port"`
	User       string          `json:"user"`
	PrivateKey string          `json:"privateKey"`
	Passphrase string          `json:"passphrase"`
	Settings   SSHSettingsForm `json:"settings"`
	// Environment (development, staging or production; "" for none yet)
	// goes on the host's inventory row: with the owner and backup revoker
	// in Settings, the host is under control from the start.
	Environment string `json:"environment"`
}

// SSHPinView is one pinned host key.
type SSHPinView struct {
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
}

// SSHHostView is a host as the UI shows it: never its private key.
type SSHHostView struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	User    string `json:"user"`
	// PublicKey is the authorized_keys line of the host's key in Yett.
	PublicKey      string       `json:"publicKey"`
	KeyFingerprint string       `json:"keyFingerprint"`
	Pins           []SSHPinView `json:"pins"`
	// AlertFingerprint is the host key the host presented instead of its
	// pins ("" when none); AlertAt when.
	AlertFingerprint string          `json:"alertFingerprint"`
	AlertAt          string          `json:"alertAt"`
	Settings         SSHSettingsForm `json:"settings"`
	Controlled       bool            `json:"controlled"`
	Problems         []string        `json:"problems"`
	CreatedAt        string          `json:"createdAt"`
	Version          int64           `json:"version"`
}

func sshHostView(h sshhosts.HostView) SSHHostView {
	v := SSHHostView{
		ID: h.ID, Name: h.Name, Address: h.Address, Port: h.Port, User: h.User, PublicKey: h.PublicKey,
		KeyFingerprint: h.KeyFingerprint, Pins: []SSHPinView{}, Problems: nonNil(h.Problems),
		CreatedAt: h.CreatedAt.UTC().Format(time.RFC3339), Version: int64(h.Version),
		Settings: SSHSettingsForm{Approval: string(h.Approval), Rules: h.Rules, TimeoutSeconds: int(h.Timeout / time.Second),
			Record: h.Record, Owner: h.Owner, BackupRevoker: h.BackupRevoker},
	}
	for _, p := range h.Pins {
		v.Pins = append(v.Pins, SSHPinView{Type: p.Type, Fingerprint: p.Fingerprint})
	}
	if h.Alert != nil {
		v.AlertFingerprint, v.AlertAt = h.Alert.Fingerprint, h.Alert.At.UTC().Format(time.RFC3339)
	}
	return v
}

// SSHPinResult is a pin from known_hosts: the host, and how many of the
// file's lines for it could not be pinned.
type SSHPinResult struct {
	Host    SSHHostView `json:"host"`
	Skipped int         `json:"skipped"`
}

// SSHRecordingView is one session recording.
type SSHRecordingView struct {
	ID      string `json:"id"`
	HostID  string `json:"hostId"`
	Started string `json:"started"`
	Bytes   int64  `json:"bytes"`
}

func recordingView(r sshhosts.RecordingView) SSHRecordingView {
	return SSHRecordingView{ID: r.ID, HostID: r.HostID, Started: r.Started.UTC().Format(time.RFC3339), Bytes: r.Bytes}
}

// SSHRecordingText is a recording read back: asciicast v2 text.
type SSHRecordingText struct {
	SSHRecordingView
	Cast     string `json:"cast"`
	Complete bool   `json:"complete"`
}
