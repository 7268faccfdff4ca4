package vault

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// An SSH host is one sealed record of kind "ssh_host": where agents may run
// commands (name, address, port, user), the client key Yett authenticates
// with, the host keys pinned for it, how commands are approved and which
// are allowed, and who answers for the access (owner, backup revoker).
// Everything is sealed, not only the key: a pin or a rule edited in the
// file would widen what agents may do, and the manifest catches that at the
// next unlock like any other altered record.
//
// The vault checks shapes and bounds only; what the key, the pins and the
// rules mean is backend/action/sshaction's to check before they get here.
const kindSSHHost = "ssh_host"

// Changes to SSH hosts, announced in EventChanged with the host named in
// Event.Credential (its id, name and new version): the composition root
// records each as a person's change to the vault.
const (
	ChangeSSHHostAdded    Change = "ssh_host_added"
	ChangeSSHHostEdited   Change = "ssh_host_edited"
	ChangeSSHHostRemoved  Change = "ssh_host_removed"
	ChangeSSHHostKeys     Change = "ssh_host_keys_pinned"
	ChangeSSHHostKeyAlert Change = "ssh_host_key_alert"
)

// Errors of SSH hosts.
var (
	// ErrNoSSHHost: no host by that name or id.
	ErrNoSSHHost = errors.New("vault: no such SSH host")
	// ErrSSHHostExists: another host has that name.
	ErrSSHHostExists = errors.New("vault: an SSH host with that name exists")
)

// Bounds of an SSH host.
const (
	MaxSSHHostTimeout     = time.Hour
	DefaultSSHHostTimeout = 30 * time.Second
	maxSSHKey             = 64 << 10
	maxSSHPins            = 16
	maxSSHPinLen          = 16 << 10
	maxSSHRules           = 200
	maxSSHRuleLen         = 8<<10 + 16
)

// SSHHostSettings is what a person may change on a host after adding it.
type SSHHostSettings struct {
	Approval      Approval
	Rules         []string // one rule per entry, in backend/action/sshaction's text form
	Timeout       time.Duration
	Record        bool // record sessions (asciicast, sealed)
	Owner         string
	BackupRevoker string
}

// NewSSHHost is a host to add. PrivateKey is the client key in the OpenSSH
// format; PublicKey and KeyFingerprint are its public half, shown again.
type NewSSHHost struct {
	Name           string
	Address        string
	Port           int
	User           string
	PrivateKey     Secret
	PublicKey      string
	KeyFingerprint string
	HostKeys       []string // pins, "type base64"
	SSHHostSettings
}

// HostKeyAlert is the last host key a host presented that was not pinned.
type HostKeyAlert struct {
	Presented   string    `json:"presented"`   // "type base64"
	Fingerprint string    `json:"fingerprint"` // "SHA256:..."
	At          time.Time `json:"at"`
}

// SSHHostView is a host without its private key: safe for the UI and logs.
type SSHHostView struct {
	ID             string        `json:"id"`
	Name           string        `json:"name"`
	Address        string        `json:"address"`
	Port           int           `json:"port"`
	User           string        `json:"user"`
	PublicKey      string        `json:"public_key"`
	KeyFingerprint string        `json:"key_fingerprint"`
	HostKeys       []string      `json:"host_keys"`
	Approval       Approval      `json:"approval"`
	Rules          []string      `json:"rules"`
	Timeout        time.Duration `json:"timeout"`
	Record         bool          `json:"record"`
	Owner          string        `json:"owner"`
	BackupRevoker  string        `json:"backup_revoker"`
	HostKeyAlert   *HostKeyAlert `json:"host_key_alert,omitempty"`
	CreatedAt      time.Time     `json:"created_at"`
	Version        uint64        `json:"version"`
}

// sshHostRecord is the plaintext sealed in an "ssh_host" record.
type sshHostRecord struct {
	Name           string        `json:"name"`
	Address        string        `json:"address"`
	Port           int           `json:"port"`
	User           string        `json:"user"`
	PrivateKey     []byte        `json:"private_key"`
	PublicKey      string        `json:"public_key"`
	KeyFingerprint string        `json:"key_fingerprint"`
	HostKeys       []string      `json:"host_keys"`
	Approval       Approval      `json:"approval"`
	Rules          []string      `json:"rules"`
	TimeoutNS      time.Duration `json:"timeout_ns"`
	Record         bool          `json:"record"`
	Owner          string        `json:"owner"`
	BackupRevoker  string        `json:"backup_revoker"`
	HostKeyAlert   *HostKeyAlert `json:"host_key_alert,omitempty"`
	CreatedAt      time.Time     `json:"created_at"`
}

// cachedHost is a host's view and its record's ciphertext as verified at
// unlock (or written since); it holds no plaintext key.
type cachedHost struct {
	view   SSHHostView
	sealed []byte
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
}

// validSSHHostName: what agents type to name the host, so plain and short.
func validSSHHostName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && (c == '-' || c == '_' || c == '.'))) {
			return false
		}
	}
	return true
}

func printable(s string, max int) bool {
	return len(s) <= max && utf8.ValidString(s) && !hasControl(s)
}

func (s SSHHostSettings) validate() (SSHHostSettings, error) {
	if s.Approval == "" {
		s.Approval = ApprovalPerCall
	}
	if s.Approval != ApprovalSession && s.Approval != ApprovalPerCall && s.Approval != ApprovalWrites {
		return s, invalid("approval must be %q, %q or %q", ApprovalSession, ApprovalPerCall, ApprovalWrites)
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultSSHHostTimeout
	}
	if s.Timeout < time.Second || s.Timeout > MaxSSHHostTimeout {
		return s, invalid("timeout must be between 1 second and %v", MaxSSHHostTimeout)
	}
	if len(s.Rules) > maxSSHRules {
		return s, invalid("at most %d command rules", maxSSHRules)
	}
	for _, r := range s.Rules {
		if r == "" || len(r) > maxSSHRuleLen || !utf8.ValidString(r) || strings.ContainsAny(r, "\n\r\x00") {
			return s, invalid("a command rule is one line of at most %d bytes", maxSSHRuleLen)
		}
	}
	s.Owner, s.BackupRevoker = strings.TrimSpace(s.Owner), strings.TrimSpace(s.BackupRevoker)
	if !printable(s.Owner, 512) || !printable(s.BackupRevoker, 512) {
		return s, invalid("owner and backup revoker must be printable and at most 512 characters")
	}
	return s, nil
}

func checkPins(pins []string) error {
	if len(pins) > maxSSHPins {
		return invalid("at most %d host keys", maxSSHPins)
	}
	for _, p := range pins {
		if p == "" || len(p) > maxSSHPinLen || !printable(p, maxSSHPinLen) || strings.Count(p, " ") != 1 {
			return invalid("a host key is \"type base64\"")
		}
	}
	return nil
}

func (h NewSSHHost) validate() (NewSSHHost, error) {
	h.Name = strings.TrimSpace(h.Name)
	if !validSSHHostName(h.Name) {
		return h, invalid("name must be 1-64 letters, digits and - _ . (starting with a letter or digit)")
	}
	h.Address = strings.TrimSpace(h.Address)
	if h.Address == "" || len(h.Address) > 253 || strings.ContainsAny(h.Address, " @/\\\t\n") || !printable(h.Address, 253) {
		return h, invalid("address must be a host name or an IP address")
	}
	if h.Port == 0 {
		h.Port = 22
	}
	if h.Port < 1 || h.Port > 65535 {
		return h, invalid("port must be 1-65535")
	}
	h.User = strings.TrimSpace(h.User)
	if h.User == "" || len(h.User) > 64 || strings.ContainsAny(h.User, " @:/\\\t\n") || !printable(h.User, 64) || strings.HasPrefix(h.User, "-") {
		return h, invalid("user must be 1-64 characters without spaces, @ or :")
	}
	switch n := h.PrivateKey.Len(); {
	case n == 0:
		return h, invalid("the host has no key")
	case n > maxSSHKey:
		return h, invalid("the key is larger than any SSH key")
	}
	if h.PublicKey == "" || !printable(h.PublicKey, 20<<10) || !printable(h.KeyFingerprint, 128) || h.KeyFingerprint == "" {
		return h, invalid("the key's public half is missing")
	}
	if err := checkPins(h.HostKeys); err != nil {
		return h, err
	}
	s, err := h.SSHHostSettings.validate()
	if err != nil {
		return h, err
	}
	h.SSHHostSettings = s
	return h, nil
}

func (r *sshHostRecord) view(id string, version uint64) SSHHostView {
	return SSHHostView{
		ID: id, Name: r.Name, Address: r.Address, Port: r.Port, User: r.User, PublicKey: r.PublicKey,
		KeyFingerprint: r.KeyFingerprint, HostKeys: append([]string{}, r.HostKeys...), Approval: r.Approval,
		Rules: append([]string{}, r.Rules...), Timeout: r.TimeoutNS, Record: r.Record, Owner: r.Owner,
		BackupRevoker: r.BackupRevoker, HostKeyAlert: r.HostKeyAlert, CreatedAt: r.CreatedAt, Version: version,
	}
}

func recordOf(h NewSSHHost, created time.Time) *sshHostRecord {
	return &sshHostRecord{
		Name: h.Name, Address: h.Address, Port: h.Port, User: h.User, PrivateKey: h.PrivateKey.b,
		PublicKey: h.PublicKey, KeyFingerprint: h.KeyFingerprint, HostKeys: h.HostKeys, Approval: h.Approval,
		Rules: h.Rules, TimeoutNS: h.Timeout, Record: h.Record, Owner: h.Owner, BackupRevoker: h.BackupRevoker,
		CreatedAt: created.UTC(),
	}
}

// decodeSSHHost parses an opened record and validates it like new input.
// The caller clears plaintext; the returned record holds its own copy of
// the key, which the caller wipes.
func decodeSSHHost(plaintext []byte) (*sshHostRecord, error) {
	var r sshHostRecord
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errors.New("SSH host record is not valid JSON of the expected shape")
	}
	h, err := NewSSHHost{
		Name: r.Name, Address: r.Address, Port: r.Port, User: r.User, PrivateKey: Secret{b: r.PrivateKey},
		PublicKey: r.PublicKey, KeyFingerprint: r.KeyFingerprint, HostKeys: r.HostKeys,
		SSHHostSettings: SSHHostSettings{Approval: r.Approval, Rules: r.Rules, Timeout: r.TimeoutNS, Record: r.Record,
			Owner: r.Owner, BackupRevoker: r.BackupRevoker},
	}.validate()
	if err != nil {
		clear(r.PrivateKey)
		return nil, err
	}
	out := recordOf(h, r.CreatedAt)
	out.HostKeyAlert = r.HostKeyAlert
	return out, nil
}

// verifySSHHost is verifyAll's check of a host record at unlock: it must
// decode, and no two hosts may share a name.
func verifySSHHost(ref recordRef, sealed, plaintext []byte, hosts map[string]cachedHost) error {
	r, err := decodeSSHHost(plaintext)
	if err != nil {
		return &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	clear(r.PrivateKey)
	for _, h := range hosts {
		if strings.EqualFold(h.view.Name, r.Name) {
			return &DamagedError{Where: recordWhere(ref), Reason: "two SSH hosts have the same name"}
		}
	}
	hosts[ref.ID] = cachedHost{view: r.view(ref.ID, ref.Version), sealed: sealed}
	return nil
}

// Add validates h, seals it as a new record and returns its view.
// Errors: ErrLocked, ErrInvalid, ErrSSHHostExists.
func (v *SSHHosts) Add(h NewSSHHost) (SSHHostView, error) {
	h, err := h.validate()
	if err != nil {
		return SSHHostView{}, err
	}
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return SSHHostView{}, err
	}
	if _, ok := v.SSHHosts().byNameLocked(h.Name); ok {
		v.mu.Unlock()
		return SSHHostView{}, ErrSSHHostExists
	}
	ref := recordRef{ID: "ssh_" + hex.EncodeToString(randomBytes(12)), Kind: kindSSHHost, Version: 1}
	view, err := v.SSHHosts().putLocked(ref, recordOf(h, v.opts.Now()))
	v.SSHHosts().unlockAfterChange(err, ChangeSSHHostAdded, view)
	return view, err
}

// putLocked seals r at ref and caches its view. v.mu held.
func (v *SSHHosts) putLocked(ref recordRef, r *sshHostRecord) (SSHHostView, error) {
	pt, err := json.Marshal(r)
	if err != nil {
		return SSHHostView{}, fmt.Errorf("vault: %w", err)
	}
	sealed, err := v.putRecord(ref, pt)
	clear(pt)
	if err != nil {
		return SSHHostView{}, err
	}
	view := r.view(ref.ID, ref.Version)
	if v.hosts == nil {
		v.hosts = map[string]cachedHost{}
	}
	v.hosts[ref.ID] = cachedHost{view: view, sealed: sealed}
	return view, nil
}

// unlockAfterChange releases v.mu, announcing change of host h when err
// is nil.
func (v *SSHHosts) unlockAfterChange(err error, change Change, h SSHHostView) {
	v.unlockAnnouncing(err, change, CredentialRef{ID: h.ID, Name: h.Name, Version: h.Version})
}

// unlockAnnouncing releases v.mu, announcing change of the record ref
// names (a host, a server) when err is nil.
func (v *Vault) unlockAnnouncing(err error, change Change, ref CredentialRef) {
	if err == nil {
		v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: strings.ReplaceAll(string(change), "_", " "), Change: change,
			Credential: &ref})
	}
	v.mu.Unlock()
	if err == nil {
		v.session().deliver()
	}
}

func (v *SSHHosts) byNameLocked(name string) (cachedHost, bool) {
	for _, h := range v.hosts {
		if strings.EqualFold(h.view.Name, name) {
			return h, true
		}
	}
	return cachedHost{}, false
}

// List returns every host's view, by name.
func (v *SSHHosts) List() ([]SSHHostView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	out := make([]SSHHostView, 0, len(v.hosts))
	for _, h := range v.hosts {
		out = append(out, h.view)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// ByName finds a host by the name agents use (any letter case),
// from the metadata decrypted at unlock: nothing is read from the file.
// Errors: ErrLocked, ErrNoSSHHost.
func (v *SSHHosts) ByName(name string) (SSHHostView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return SSHHostView{}, err
	}
	h, ok := v.SSHHosts().byNameLocked(name)
	if !ok {
		return SSHHostView{}, ErrNoSSHHost
	}
	return h.view, nil
}

// Get returns one host's view by id. Errors: ErrLocked, ErrNoSSHHost.
func (v *SSHHosts) Get(id string) (SSHHostView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return SSHHostView{}, err
	}
	h, ok := v.hosts[id]
	if !ok {
		return SSHHostView{}, ErrNoSSHHost
	}
	return h.view, nil
}

// openLocked opens host id's record at exactly version (0: the current
// one) from its verified ciphertext. v.mu held. The caller wipes the key.
func (v *SSHHosts) openLocked(id string, version uint64) (*sshHostRecord, recordRef, error) {
	h, ok := v.hosts[id]
	ref, okRef := v.refs[id]
	if !ok || !okRef {
		return nil, recordRef{}, ErrNoSSHHost
	}
	if version != 0 && (h.view.Version != version || ref.Version != version) {
		return nil, recordRef{}, ErrCredentialChanged
	}
	pt, err := openRecord(v.keys, v.hdr.VaultID, ref, h.sealed)
	if err != nil {
		return nil, recordRef{}, fmt.Errorf("vault: the SSH host's record does not open: %w", err)
	}
	r, err := decodeSSHHost(pt)
	clear(pt)
	if err != nil {
		return nil, recordRef{}, fmt.Errorf("vault: the SSH host's record does not decode: %w", err)
	}
	return r, ref, nil
}

// change applies change to host id's record, which must still be at
// version (0: whatever version it is at), and seals the result as the next
// version. Errors: ErrLocked, ErrNoSSHHost, ErrCredentialChanged, and
// change's own.
func (v *SSHHosts) change(id string, version uint64, kind Change, change func(r *sshHostRecord) error) (SSHHostView, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return SSHHostView{}, err
	}
	r, ref, err := v.SSHHosts().openLocked(id, version)
	if err != nil {
		v.mu.Unlock()
		return SSHHostView{}, err
	}
	defer clear(r.PrivateKey)
	if err := change(r); err != nil {
		v.mu.Unlock()
		return SSHHostView{}, err
	}
	ref.Version++
	view, err := v.SSHHosts().putLocked(ref, r)
	v.SSHHosts().unlockAfterChange(err, kind, view)
	return view, err
}

// Update replaces a host's settings. Errors: ErrLocked, ErrInvalid,
// ErrNoSSHHost.
func (v *SSHHosts) Update(id string, s SSHHostSettings) (SSHHostView, error) {
	s, err := s.validate()
	if err != nil {
		return SSHHostView{}, err
	}
	return v.SSHHosts().change(id, 0, ChangeSSHHostEdited, func(r *sshHostRecord) error {
		r.Approval, r.Rules, r.TimeoutNS, r.Record = s.Approval, s.Rules, s.Timeout, s.Record
		r.Owner, r.BackupRevoker = s.Owner, s.BackupRevoker
		return nil
	})
}

// SetKeys replaces a host's pins and clears its host key alert. With
// version other than 0 the host must still be at that version: trust on
// first use commits the key it saw only for the host it probed.
// Errors: ErrLocked, ErrInvalid, ErrNoSSHHost, ErrCredentialChanged.
func (v *SSHHosts) SetKeys(id string, version uint64, pins []string) (SSHHostView, error) {
	if err := checkPins(pins); err != nil {
		return SSHHostView{}, err
	}
	return v.SSHHosts().change(id, version, ChangeSSHHostKeys, func(r *sshHostRecord) error {
		r.HostKeys, r.HostKeyAlert = append([]string{}, pins...), nil
		return nil
	})
}

// Alert records that host id presented a key that is not pinned.
// Errors: ErrLocked, ErrInvalid, ErrNoSSHHost.
func (v *SSHHosts) Alert(id string, a HostKeyAlert) (SSHHostView, error) {
	if err := checkPins([]string{a.Presented}); err != nil || !printable(a.Fingerprint, 128) {
		return SSHHostView{}, invalid("the presented host key is not \"type base64\"")
	}
	a.At = a.At.UTC()
	return v.SSHHosts().change(id, 0, ChangeSSHHostKeyAlert, func(r *sshHostRecord) error {
		r.HostKeyAlert = &a
		return nil
	})
}

// Remove deletes a host and its key. Errors: ErrLocked, ErrNoSSHHost.
func (v *SSHHosts) Remove(id string) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	h, ok := v.hosts[id]
	if !ok {
		v.mu.Unlock()
		return ErrNoSSHHost
	}
	err := v.deleteRecord(id)
	if err == nil {
		delete(v.hosts, id)
	}
	v.SSHHosts().unlockAfterChange(err, ChangeSSHHostRemoved, h.view)
	return err
}

// SSHHosts.KeyOf returns the private key of host id at exactly version, opened
// from the ciphertext verified at unlock (nothing is read from the file).
// The caller wipes it after its one use. A host edited or removed since the
// caller chose it is ErrCredentialChanged: the approval was for the version
// it saw.
//
// Errors: ErrLocked, ErrCredentialChanged.
func (v *SSHHosts) KeyOf(id string, version uint64) (*Secret, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	if version == 0 {
		return nil, ErrCredentialChanged
	}
	r, _, err := v.SSHHosts().openLocked(id, version)
	if errors.Is(err, ErrNoSSHHost) {
		return nil, ErrCredentialChanged
	}
	if err != nil {
		return nil, err
	}
	return &Secret{b: r.PrivateKey}, nil
}
