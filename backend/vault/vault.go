// Package vault keeps Yett's credentials encrypted at rest and decides
// when they are usable at all.
//
// # States
//
// A vault is uninitialised (no vault yet), locked, unlocked, or damaged.
// Only an unlocked vault holds its data key in memory; Lock wipes it and
// every key derived from it (best effort, see sessionKeys). A damaged vault
// is never written to or repaired: Status().Damaged names the file part or
// record that failed and Unlock returns ErrDamaged.
//
// # The epoch
//
// Epoch is a persisted counter that goes up on every lock, unlock, create,
// reset and loss of the protected session (a keyring key that vanished, or
// damage found while unlocked). Each increment is committed (SQLite
// synchronous=FULL) before the new state is visible or announced, and the
// in-memory value never goes down, so an epoch value names one stretch of
// availability. Approvals elsewhere bind to it: a different epoch means the
// approval is void.
//
// # Crypto
//
// A random 256-bit data key seals every record with XChaCha20-Poly1305;
// associated data binds the vault id, record id, kind and version. A MAC'd
// manifest of all records, checked at unlock, catches deleted, re-added and
// rolled-back rows. The data key is wrapped by an Argon2id passphrase key
// and, if the person opts in, by a random key kept in the OS keyring. The
// file format and its limits are in docs/vault-format.md.
package vault

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"github.com/yettdev/yett/backend/feed"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/store"
	"gorm.io/gorm"
)

// State is the vault's lifecycle state.
type State string

const (
	StateUninitialised State = "uninitialised"
	StateLocked        State = "locked"
	StateUnlocked      State = "unlocked"
	StateDamaged       State = "damaged"
)

// FileName is the database file inside the vault directory.
const FileName = "yett.db"

// DefaultAutoLockAfter is the idle time after which an unlocked vault locks.
const DefaultAutoLockAfter = 8 * time.Hour

// Options configure Open. The zero value is usable.
type Options struct {
	// AutoLockAfter is the idle auto-lock time until the person sets one
	// with SetAutoLockAfter (which is stored in the vault and wins). 0 => 8h.
	AutoLockAfter time.Duration
	// Keyring opens the OS keyring; nil disables keyring unlock.
	Keyring KeyringOpener
	// Now is the clock; nil => time.Now.
	Now func() time.Time
	// AfterFunc schedules the idle timer; nil => time.AfterFunc. Tests pass
	// a fake to fire it at will.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// ThrottleBase is the unit of the delay after repeated wrong
	// passphrases; 0 => 1 s (so 1 s, 2 s, 4 s ... up to about 17 min).
	ThrottleBase time.Duration
	// KDF is used by Create; zero => DefaultKDF. Tests use cheap ones.
	KDF KDFParams
}

// Status is a snapshot of the vault for the UI and other packages.
type Status struct {
	State          State         `json:"state"`
	Epoch          uint64        `json:"epoch"`
	KeyringEnabled bool          `json:"keyring_enabled"`
	KeyringNote    string        `json:"keyring_note,omitempty"`
	AutoLockAfter  time.Duration `json:"auto_lock_after"`
	LockDeadline   time.Time     `json:"lock_deadline"`
	Damaged        string        `json:"damaged,omitempty"`
	RetryAfter     time.Duration `json:"retry_after"`
	KDF            string        `json:"kdf,omitempty"`
}

// Vault is an open vault directory. Its methods are safe for concurrent use.
type Vault struct {
	path string
	opts Options

	// unlockMu serialises Create, Unlock and UnlockWithKeyring so the slow
	// KDF runs without holding mu (Status stays responsive meanwhile).
	unlockMu sync.Mutex
	// keyringMu keeps one OS keyring operation (with its undo after a
	// cancellation) at a time; see withKeyring. Never held with mu.
	keyringMu sync.Mutex

	mu sync.Mutex
	db *gorm.DB // nil when the file could not be opened (damaged) or after Close
	// recordStmt reads one record (recordByID); prepared on db, which
	// recordStmtDB names, and dropped before db closes.
	recordStmt   *sql.Stmt
	recordStmtDB *gorm.DB
	closed       bool
	state        State
	damaged      *DamagedError
	epoch        uint64
	hdr          *header
	keyringWrap  []byte
	keyringNote  string
	keys         *sessionKeys                 // non-nil only while unlocked
	refs         map[string]recordRef         // the manifest's view, while unlocked
	creds        map[string]cachedCredential  // decrypted metadata, no secrets
	removed      map[string]removedCredential // sealed, for Restore (undo.go)
	hosts        map[string]cachedHost        // SSH hosts' metadata, no keys (sshhosts.go)
	servers      map[string]cachedServer      // MCP servers' metadata, no secrets (mcpserver_records.go)
	autoLock     time.Duration
	controls     []byte // the sealed controls (ControlsBlob), nil when none
	backup       backupSettings
	deadline     time.Time
	stopTimer    func() bool
	timerGen     uint64

	// auditRecipient is the audit key's public half, "" when there is none
	// yet; see auditkey.go for why it is readable while locked.
	auditRecipient string

	events feed.Feed[Event]

	roles vaultRoles // made once in Open: a call never allocates one
}

// vaultRoles are the record kinds and roles over the vault.
type vaultRoles struct {
	credentials *Credentials
	sshHosts    *SSHHosts
	mcpServers  *MCPServers
	session     *session
	keyring     *keyringSlot
	idle        *idleTimer
	backups     *backups
}

// Open opens the vault in dir (created 0700 if missing), creating an empty,
// uninitialised database if there is none. A damaged file does not make
// Open fail: the Vault is returned in StateDamaged with Status().Damaged
// saying what is wrong, and the file is left exactly as it was.
func Open(dir string, opts Options) (*Vault, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AfterFunc == nil {
		opts.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if opts.ThrottleBase <= 0 {
		opts.ThrottleBase = time.Second
	}
	if opts.AutoLockAfter <= 0 {
		opts.AutoLockAfter = DefaultAutoLockAfter
	}
	if opts.KDF == (KDFParams{}) {
		opts.KDF = DefaultKDF
	}
	if err := opts.KDF.validate(); err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	// userdir.Ensure normally made dir already (and owns tightening an
	// existing one); creating it here covers callers that pass a new path.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	v := &Vault{path: filepath.Join(dir, FileName), opts: opts, autoLock: opts.AutoLockAfter}
	v.roles = vaultRoles{credentials: &Credentials{v}, sshHosts: &SSHHosts{v}, mcpServers: &MCPServers{v}, session: &session{v},
		keyring: &keyringSlot{v}, idle: &idleTimer{v}, backups: &backups{v}}
	if opts.Keyring == nil {
		v.keyringNote = "keyring unlock is turned off in this configuration"
	}
	db, err := store.Open(v.path, schema)
	if errors.Is(err, store.ErrDamaged) {
		v.state = StateDamaged
		v.damaged = &DamagedError{Where: "file", Reason: err.Error()}
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	v.db = db
	if err := v.load(); err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			v.state, v.damaged = StateDamaged, d
			return v, nil
		}
		store.Close(db)
		return nil, err
	}
	return v, nil
}

// load reads what a locked vault needs: epoch, header, keyring wrap, and
// that a manifest is present and well formed. Its MAC is checked at unlock.
func (v *Vault) load() error {
	epoch, err := readEpoch(v.db)
	if err != nil {
		return err
	}
	v.epoch = epoch
	var metas []metaRow
	if err := v.db.Raw(`SELECT header, keyring_wrap, manifest FROM vault_meta`).Scan(&metas).Error; err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if len(metas) == 0 {
		var n int64
		if err := v.db.Raw(`SELECT count(*) FROM vault_records`).Scan(&n).Error; err != nil {
			return fmt.Errorf("vault: %w", err)
		}
		if n > 0 {
			return &DamagedError{Where: "header", Reason: fmt.Sprintf("the header row is missing but %d records exist", n)}
		}
		v.state = StateUninitialised
		return nil
	}
	m := metas[0]
	h, err := decodeHeader(m.Header)
	if err != nil {
		return &DamagedError{Where: "header", Reason: err.Error()}
	}
	if m.KeyringWrap != nil {
		if err := checkWrappedKey(m.KeyringWrap); err != nil {
			return &DamagedError{Where: "keyring wrap", Reason: err.Error()}
		}
	}
	if m.Manifest == nil {
		return &DamagedError{Where: "manifest", Reason: "the manifest is missing, so deleted or rolled-back records could not be detected"}
	}
	man, _, _, err := decodeManifest(m.Manifest)
	if err != nil {
		return &DamagedError{Where: "manifest", Reason: err.Error()}
	}
	recipient, err := auditRecipientFromManifest(man.Records)
	if err != nil {
		return err
	}
	v.hdr, v.keyringWrap, v.state = h, m.KeyringWrap, StateLocked
	v.auditRecipient = recipient
	return nil
}

// refreshHeader reads the header and the keyring wrap again before they
// are used to unlock: another process on the same file (the app and yett
// serve) may have changed the passphrase or keyring unlock since this one
// loaded them, and a passphrase replaced there must not go on opening the
// file here. A header that no longer decodes is damage. v.mu held, state
// locked or unlocked.
func (v *Vault) refreshHeader() error {
	var metas []metaRow
	if err := v.db.Raw(`SELECT header, keyring_wrap FROM vault_meta WHERE id = 1`).Scan(&metas).Error; err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if len(metas) != 1 {
		return &DamagedError{Where: "header", Reason: "the header row is gone"}
	}
	m := metas[0]
	if v.hdr == nil || !bytes.Equal(m.Header, v.hdr.encode()) {
		h, err := decodeHeader(m.Header)
		if err != nil {
			return &DamagedError{Where: "header", Reason: err.Error()}
		}
		if v.hdr != nil && h.VaultID != v.hdr.VaultID {
			return &DamagedError{Where: "header", Reason: "it names another vault than the one this process opened"}
		}
		v.hdr = h
	}
	if m.KeyringWrap != nil {
		if err := checkWrappedKey(m.KeyringWrap); err != nil {
			return &DamagedError{Where: "keyring wrap", Reason: err.Error()}
		}
	}
	v.keyringWrap = m.KeyringWrap
	return nil
}

type metaRow struct {
	Header      []byte
	KeyringWrap []byte
	Manifest    []byte
}

// Status returns a snapshot. It never touches the keyring or the KDF.
func (v *Vault) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := Status{
		State:          v.state,
		Epoch:          v.epoch,
		KeyringEnabled: v.keyringWrap != nil,
		KeyringNote:    v.keyringNote,
		AutoLockAfter:  v.autoLock,
		LockDeadline:   v.deadline,
	}
	if v.damaged != nil {
		s.Damaged = v.damaged.Error()
	}
	if v.hdr != nil {
		s.KDF = v.hdr.KDF.String()
	}
	if v.state == StateLocked && v.db != nil {
		if t, err := readThrottle(v.db); err == nil {
			s.RetryAfter = t.retryAfter(v.opts.ThrottleBase, v.opts.Now())
		}
	}
	return s
}

// Epoch returns the current vault epoch.
func (v *Vault) Epoch() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.epoch
}

// Close locks the vault (one "locked" event, reason "closed", if it was
// unlocked) and closes the database. Later calls return ErrClosed.
func (v *Vault) Close() error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	var lockErr error
	if v.state == StateUnlocked {
		lockErr = v.session().lockLocked("closed")
	}
	v.closed = true
	v.idle().stopIdleTimer()
	var closeErr error
	v.closeRecordStmt()
	if v.db != nil {
		closeErr = store.Close(v.db)
		v.db = nil
	}
	v.mu.Unlock()
	v.session().deliver()
	return errors.Join(lockErr, closeErr)
}

// usable reports why v cannot serve a request needing the data key; v.mu held.
func (v *Vault) usable() error {
	switch {
	case v.closed:
		return ErrClosed
	case v.state == StateDamaged:
		return v.damaged
	case v.state == StateUninitialised:
		return ErrNotInitialised
	case v.state != StateUnlocked:
		return ErrLocked
	}
	return nil
}

// Credentials is the vault's kind of HTTP credential records: adding,
// editing, rotating and removing them, and the binding rules (which host
// and path each may serve). The vault stays the sealed store; the rules of
// the kind live here (records.go, edit.go, overlap.go).
type Credentials struct{ *Vault }

// SSHHosts is the vault's kind of SSH host records: each host's client key
// and pinned host keys, its rules, and the alert a changed host key raises
// (sshhost_records.go).
type SSHHosts struct{ *Vault }

// MCPServers is the vault's kind of upstream MCP server records: how Yett
// reaches each server (the command it starts or the URL it calls), the
// secrets it hands that server, and how its tools are approved
// (mcpserver_records.go).
type MCPServers struct{ *Vault }

// MCPServers returns the vault's upstream MCP server records.
func (v *Vault) MCPServers() *MCPServers { return v.roles.mcpServers }

// Credentials returns the vault's HTTP credential records.
func (v *Vault) Credentials() *Credentials { return v.roles.credentials }

// SSHHosts returns the vault's SSH host records.
func (v *Vault) SSHHosts() *SSHHosts { return v.roles.sshHosts }

// The vault's own roles. They group its methods by what they do; their
// state stays in the Vault, under its one mutex, which is what keeps a
// lock, an unlock and a record change atomic with respect to each other.
type (
	// session is the unlocked session: deriving and dropping the keys,
	// the epoch every lock and unlock moves, the unlock throttle, and the
	// events that announce each (lifecycle.go, epoch.go, events.go).
	session struct{ *Vault }
	// keyringSlot is the OS keyring's copy of the vault key (keyring.go).
	keyringSlot struct{ *Vault }
	// idleTimer locks the vault after the auto-lock interval (idle.go).
	idleTimer struct{ *Vault }
	// backups writes and restores backup files (backup.go).
	backups struct{ *Vault }
)

func (v *Vault) session() *session     { return v.roles.session }
func (v *Vault) keyring() *keyringSlot { return v.roles.keyring }
func (v *Vault) idle() *idleTimer      { return v.roles.idle }
func (v *Vault) backups() *backups     { return v.roles.backups }
