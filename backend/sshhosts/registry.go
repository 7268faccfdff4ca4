// Package sshhosts is Yett's custody of SSH hosts for the person who sets
// them up, the same for every front end.
//
// # What it guarantees
//
//   - A host's client key is made in Yett (Ed25519) or imported (OpenSSH,
//     PEM or PKCS#8, passphrase-protected ones included: the passphrase
//     opens the key once and is not kept). The private key goes into the
//     vault's sealed host record and never comes back out through this
//     package: views carry the public key, ready for authorized_keys, and
//     its fingerprint.
//   - Host keys are pinned only by the person: from their known_hosts file,
//     pasted, or by trust on first use, which connects, authenticates with
//     the host's key and commits the key the host presented only when the
//     host accepted Yett's key, and only for the host record as it was when
//     the probe began. Trust on first use is offered only for a host with
//     no pin; a host that later presents another key is refused by the
//     gateway and keeps an alert here until the person pins a key again.
//     Every pin is audited with its fingerprint and how it was made.
//   - Session recordings (recordings.go) are sealed under the vault with a
//     key of their own per recording and read back only while it is
//     unlocked.
package sshhosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// Errors callers branch on; their texts are safe to show.
var (
	// ErrInvalid wraps a refusal of what the person entered; the text says
	// which field and why, never its value.
	ErrInvalid = errors.New("sshhost: invalid input")
	// ErrAlreadyPinned: trust on first use is for a host without pins.
	ErrAlreadyPinned = errors.New("sshhost: this host has a pinned host key already; trust on first use is only for its first connection")
	// ErrNoAlert: there is no presented key to accept.
	ErrNoAlert = errors.New("sshhost: this host has not presented an unpinned host key")
	// ErrChanged: the host was edited while a probe ran; nothing was pinned.
	ErrChanged = errors.New("sshhost: the host was changed while Yett connected to it; nothing was pinned")
)

// Config is what a Registry needs. Vault and DataDir are required.
type Config struct {
	Vault   *vault.Vault
	DataDir string
	// Record writes an event into the audit log (the composition root's
	// recorder, which stamps time, boot and surface); nil records nothing.
	Record func(audit.Event)
	Logger *slog.Logger
	// ConnectTimeout bounds trust on first use; 0 means 15 s.
	ConnectTimeout time.Duration
	// KnownHosts is the person's known_hosts file; "" means
	// ~/.ssh/known_hosts.
	KnownHosts string
}

// Registry adds, pins, edits and removes hosts, and keeps their recordings.
// Safe for concurrent use.
type Registry struct {
	cfg Config
	rec *recordings
}

// New returns a Registry and makes its recordings directory.
func New(cfg Config) (*Registry, error) {
	if cfg.Vault == nil || cfg.DataDir == "" {
		return nil, errors.New("sshhost: Vault and DataDir are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = sshaction.DefaultConnectTimeout
	}
	if cfg.Record == nil {
		cfg.Record = func(audit.Event) {}
	}
	rec, err := openRecordings(filepath.Join(cfg.DataDir, RecordingsDir), cfg.Vault)
	if err != nil {
		return nil, err
	}
	return &Registry{cfg: cfg, rec: rec}, nil
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
}

// Settings is what a person sets on a host besides where it is and its key.
type Settings struct {
	Approval vault.Approval
	// Rules is the command rules' text (backend/action/sshaction.ParseRules).
	Rules         string
	Timeout       time.Duration
	Record        bool
	Owner         string
	BackupRevoker string
}

func (s Settings) vault() (vault.SSHHostSettings, error) {
	rules, err := sshaction.ParseRules(s.Rules)
	if err != nil {
		return vault.SSHHostSettings{}, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "ssh: "))
	}
	var lines []string
	if len(rules) > 0 {
		lines = strings.Split(strings.TrimSuffix(rules.String(), "\n"), "\n")
	}
	return vault.SSHHostSettings{Approval: s.Approval, Rules: lines, Timeout: s.Timeout, Record: s.Record,
		Owner: s.Owner, BackupRevoker: s.BackupRevoker}, nil
}

// NewHost is a host to add. With PrivateKey empty, Yett makes an Ed25519
// key; otherwise PrivateKey is imported, opened with Passphrase if it is
// protected.
type NewHost struct {
	Name       string
	Address    string
	Port       int
	User       string
	PrivateKey []byte
	Passphrase []byte
	Settings
}

// Add adds a host and returns its view, with the public key to copy into
// the host's authorized_keys. The private key and the passphrase are
// wiped before Add returns.
//
// Errors: ErrInvalid (and the key import's errors from backend/action/sshaction,
// such as ErrPassphraseNeeded), vault.ErrLocked, vault.ErrSSHHostExists.
func (m *Registry) Add(h NewHost) (HostView, error) {
	defer clear(h.PrivateKey)
	defer clear(h.Passphrase)
	h.Address = strings.TrimSpace(h.Address)
	if err := sshaction.CheckAddress(h.Address); err != nil {
		return HostView{}, invalid("%s", err.Error())
	}
	s, err := h.Settings.vault()
	if err != nil {
		return HostView{}, err
	}
	comment := "yett:" + strings.TrimSpace(h.Name)
	var key *sshaction.KeyPair
	if len(h.PrivateKey) == 0 {
		key, err = sshaction.GenerateEd25519(comment)
	} else {
		key, err = sshaction.ImportPrivateKey(h.PrivateKey, h.Passphrase, comment)
	}
	if err != nil {
		return HostView{}, err
	}
	defer key.Wipe()
	v, err := m.cfg.Vault.SSHHosts().Add(vault.NewSSHHost{
		Name: h.Name, Address: h.Address, Port: h.Port, User: h.User, PrivateKey: vault.NewSecret(key.PEM),
		PublicKey: key.Public, KeyFingerprint: key.Fingerprint, SSHHostSettings: s,
	})
	if err != nil {
		return HostView{}, err
	}
	return viewOf(v), nil
}

// Hosts lists every host, by name. Errors: vault.ErrLocked.
func (m *Registry) Hosts() ([]HostView, error) {
	hs, err := m.cfg.Vault.SSHHosts().List()
	if err != nil {
		return nil, err
	}
	out := make([]HostView, 0, len(hs))
	for _, h := range hs {
		out = append(out, viewOf(h))
	}
	return out, nil
}

// Host returns one host's view. Errors: vault.ErrLocked, vault.ErrNoSSHHost.
func (m *Registry) Host(id string) (HostView, error) {
	h, err := m.cfg.Vault.SSHHosts().Get(id)
	if err != nil {
		return HostView{}, err
	}
	return viewOf(h), nil
}

// Update replaces a host's settings. Errors: ErrInvalid, vault.ErrLocked,
// vault.ErrNoSSHHost.
func (m *Registry) Update(id string, s Settings) (HostView, error) {
	vs, err := s.vault()
	if err != nil {
		return HostView{}, err
	}
	h, err := m.cfg.Vault.SSHHosts().Update(id, vs)
	if err != nil {
		return HostView{}, err
	}
	return viewOf(h), nil
}

// Remove deletes a host and its key (its recordings stay: they are
// evidence). Errors: vault.ErrLocked, vault.ErrNoSSHHost.
func (m *Registry) Remove(id string) error { return m.cfg.Vault.SSHHosts().Remove(id) }

// PinPasted pins the host keys a person pasted (known_hosts lines,
// ssh-keyscan output or public keys), replacing the pins the host had.
// Errors: ErrInvalid, vault.ErrLocked, vault.ErrNoSSHHost.
func (m *Registry) PinPasted(id, text string) (HostView, error) {
	pins, err := sshaction.ParsePins(text)
	if err != nil {
		return HostView{}, invalid("%s", strings.TrimPrefix(err.Error(), "ssh: "))
	}
	return m.pin(id, 0, pins, audit.ReasonPasted)
}

// PinFromKnownHosts pins the keys the person's known_hosts file holds for
// the host's address and port, replacing the host's pins. skipped counts
// lines for the host that could not be pinned (markers, other key types).
// Errors: ErrInvalid (no key for this host in the file), vault.ErrLocked,
// vault.ErrNoSSHHost, and a failure to read the file.
func (m *Registry) PinFromKnownHosts(id string) (HostView, int, error) {
	h, err := m.cfg.Vault.SSHHosts().Get(id)
	if err != nil {
		return HostView{}, 0, err
	}
	path := m.cfg.KnownHosts
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return HostView{}, 0, invalid("Yett cannot find your home directory to read ~/.ssh/known_hosts")
		}
		path = filepath.Join(home, ".ssh", "known_hosts")
	}
	data, err := readBounded(path, 4<<20)
	if err != nil {
		return HostView{}, 0, invalid("Yett could not read %s", path)
	}
	pins, skipped, err := sshaction.FromKnownHosts(data, h.Address, h.Port)
	if err != nil {
		return HostView{}, skipped, invalid("%s", strings.TrimPrefix(err.Error(), "ssh: "))
	}
	if len(pins) == 0 {
		return HostView{}, skipped, invalid("%s holds no host key Yett can pin for %s", path, net.JoinHostPort(h.Address, strconv.Itoa(h.Port)))
	}
	v, err := m.pin(id, h.Version, pins, audit.ReasonKnownHosts)
	return v, skipped, err
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// AcceptPresented pins the key the host presented instead of its pin (the
// person checked the host and decided the change is genuine), replacing
// the old pins. Errors: ErrNoAlert, vault.ErrLocked, vault.ErrNoSSHHost.
func (m *Registry) AcceptPresented(id string) (HostView, error) {
	h, err := m.cfg.Vault.SSHHosts().Get(id)
	if err != nil {
		return HostView{}, err
	}
	if h.HostKeyAlert == nil {
		return HostView{}, ErrNoAlert
	}
	p, err := sshaction.ParsePin(h.HostKeyAlert.Presented)
	if err != nil {
		return HostView{}, ErrNoAlert
	}
	return m.pin(id, h.Version, []sshaction.Pin{p}, audit.ReasonPasted)
}

// TrustOnFirstUse connects to a host that has no pin, authenticates with
// its key, and pins the host key it presented, only if the host accepted
// Yett's key and the host record was not changed meanwhile. It runs
// nothing on the host. A failed authentication leaves no pin.
//
// Errors: ErrAlreadyPinned, ErrChanged, vault.ErrLocked,
// vault.ErrNoSSHHost, and the connection's errors from backend/action/sshaction
// (ErrAuth, ErrUnreachable, ErrHandshake, ErrHostKeyType).
func (m *Registry) TrustOnFirstUse(ctx context.Context, id string) (HostView, error) {
	h, err := m.cfg.Vault.SSHHosts().Get(id)
	if err != nil {
		return HostView{}, err
	}
	if len(h.HostKeys) > 0 || h.HostKeyAlert != nil {
		return HostView{}, ErrAlreadyPinned
	}
	key := &lentKey{v: m.cfg.Vault, id: h.ID, version: h.Version}
	pin, err := sshaction.Probe(ctx, sshaction.Host{ID: h.ID, Version: h.Version, Address: h.Address, Port: h.Port, User: h.User},
		key, m.cfg.ConnectTimeout)
	if err != nil {
		return HostView{}, err
	}
	v, err := m.pin(id, h.Version, []sshaction.Pin{pin}, audit.ReasonTrustOnFirstUse)
	if errors.Is(err, vault.ErrCredentialChanged) {
		return HostView{}, ErrChanged
	}
	return v, err
}

// pin replaces a host's pins (at version, 0 for any) and audits it.
func (m *Registry) pin(id string, version uint64, pins []sshaction.Pin, how audit.Reason) (HostView, error) {
	lines := make([]string, len(pins))
	fps := make([]string, len(pins))
	for i, p := range pins {
		lines[i], fps[i] = p.String(), p.Fingerprint()
	}
	h, err := m.cfg.Vault.SSHHosts().SetKeys(id, version, lines)
	if err != nil {
		return HostView{}, err
	}
	m.cfg.Record(audit.Event{
		Type: audit.EventSSHHostKeyPinned, VaultEpoch: m.cfg.Vault.Epoch(), Reason: how,
		SSH: &audit.SSHFacts{Host: h.Name, User: h.User, Address: net.JoinHostPort(h.Address, strconv.Itoa(h.Port)),
			HostFingerprint: strings.Join(fps, " ")},
	})
	return viewOf(h), nil
}

// lentKey lends a host's key from the vault, at the version probed, for
// one connection, and wipes it after.
type lentKey struct {
	v       *vault.Vault
	id      string
	version uint64
}

func (k *lentKey) WithSecret(_ context.Context, use func([]byte) error) error {
	sec, err := k.v.SSHHosts().KeyOf(k.id, k.version)
	if err != nil {
		return err
	}
	defer sec.Wipe()
	return use(sec.Bytes())
}
