// Package keeper is the composition root of one Yett process: it keeps one
// data directory's parts together, the same way for the desktop app and for
// `yett serve`, so that what Yett does (and what its audit log says) does not
// depend on which front end runs.
//
// # What it owns
//
// A Keeper follows the vault the front end opened. It opens the audit log
// (encrypted to the vault's audit recipient), reopens it when the
// authenticated recipient differs from the one it was opened with, and sets
// it aside at a vault reset; it records every vault event once, with the boot
// id of the gateway it starts and a clipped reason; it runs OAuth custody,
// the operation catalogue and the agent gateway while the log is open, and
// stops them, in order, before the log closes. The shim the gateway accepts
// is pinned by hashing the yett CLI once.
//
// # What front ends get
//
// State (the broker, OAuth custody, the catalogue, whether the log is being
// written and why not, the socket, the boot id) and Subscribe, which tells
// them when it changed, through backend/feed. The audit log itself, for the
// read side. Nothing else: the desktop app's services and `yett serve`'s
// terminal are thin over it.
package keeper

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/presence"
	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// Config is what a Keeper needs. DataDir, RuntimeDir and Vault are
// required.
type Config struct {
	DataDir    string
	RuntimeDir string
	// Vault is the vault of DataDir, opened by the front end (which shows
	// setup and unlock); the keeper follows it and never closes it.
	Vault  *vault.Vault
	Logger *slog.Logger
	// ShimPath is the yett CLI whose `yett mcp` the gateway accepts on its
	// socket: the one installed next to the app, or `yett serve`'s own
	// binary. "" accepts any program of the user's (the card still names
	// what connected), and the log says so.
	ShimPath        string
	ApprovalTimeout time.Duration
	// OpenBrowser opens an authorization address for a connection a person
	// starts (the app); nil where there is no browser.
	OpenBrowser func(url string)
	// HTTP tunes the gateway's executor (tests).
	HTTP action.Config
	// Origin names the front end in the entries the keeper and OAuth
	// custody record (their surface field): "terminal" for the yett CLI's
	// setup commands; "" leaves it out.
	Origin string
	// NoGateway keeps the vault, the audit log, OAuth custody and the
	// catalogue but serves no agents: the yett CLI's setup commands, which
	// change what the app or `yett serve` serves.
	NoGateway bool
	// Notify opens the desktop's notifications (notify.Open) for the
	// gateway's cards; nil shows none.
	Notify func(notify.Handlers) (notify.Notifier, error)
	// KnownHosts is the known_hosts file a person pins host keys from;
	// "" is ~/.ssh/known_hosts.
	KnownHosts string
	// Raise brings the front end's window forward with a card in view
	// (a notification was clicked, or cannot be shown); nil where there is
	// no window.
	Raise func(card string)
	// Presence verifies the person before an approval takes effect where
	// the sealed controls ask for it; nil is this platform's own
	// (presence.Default: polkit on Linux).
	Presence presence.Verifier
	// Getenv reads the front end's environment (which desktop this is, for
	// the default verification); nil is os.Getenv.
	Getenv func(string) string
	// WitnessRetry is the first wait before an unreachable team witness
	// is tried again (tests); 0 is witness.DefaultRetry.
	WitnessRetry time.Duration
}

// State is what front ends read. Broker, OAuth and Operations are nil while
// the parts they belong to are not running.
type State struct {
	Broker     *approval.Broker
	OAuth      *oauth.Custody
	Operations *operation.Catalogue
	// Inventory is the owner inventory and its drills, running with OAuth
	// custody.
	Inventory *inventory.Inventory
	// AuditWriting says the log is open and being written; AuditProblem
	// says, in words for the person, why not (or what went wrong).
	AuditWriting bool
	AuditProblem string
	// AuditHeldElsewhere: another Yett process (the app or yett serve)
	// writes this data directory's log, the one writer it takes.
	AuditHeldElsewhere bool
	// AuditRecipient is the public key the log is sealed to.
	AuditRecipient string
	SocketPath     string
	BootID         string
	// GatewayProblem says why the gateway is not running, "" when it runs
	// or has nothing to run on yet (no vault, no audit log).
	GatewayProblem string
	// Notifications says whether cards reach the person as notifications,
	// with buttons, and if not why.
	Notifications notify.Status
	// NotificationServer says whether the server showing them is trusted
	// with Approve, and why not.
	NotificationServer NotificationServer
}

// Keeper is one process's custody of one data directory. Safe for
// concurrent use.
type Keeper struct {
	cfg   Config
	log   *slog.Logger
	vault *vault.Vault
	dir   string // the audit log's directory
	shim  [][32]byte

	mu        sync.Mutex
	audit     *audit.Log
	recipient string // the recipient audit encrypts to
	problem   string
	elsewhere bool // the log's one writer is another process
	oauth     *oauth.Custody
	ops       *operation.Catalogue
	gw        *gateway.Gateway
	gwCancel  context.CancelFunc
	gwDone    chan struct{}
	upstream  *upstream.Manager
	gwProblem string
	notes     *notifications // the notifier, its relay and the pinned server (notifications.go)
	ctl       *controlsPart  // the sealed controls and how a person confirms (controls.go)
	inventory inventoryPart
	team      teamPart // the team syncer (team.go)
	// controls are the sealed controls, read at unlock (controls.go). Read
	// without k.mu: the relay and the broker ask for them from goroutines
	// that k.Close waits for while it holds k.mu. controlsMu makes their
	// writers one at a time.
	controls   atomic.Pointer[Controls]
	controlsMu sync.Mutex
	// verifyMu guards verifyOK, verifyWhy and verifyAt, CanVerify's cache.
	verifyMu  sync.Mutex
	verifyOK  bool
	verifyWhy string
	verifyAt  time.Time
	ssh       *sshhosts.Registry // set in Open, never changed
	closed    bool

	// boot is the boot id of the gateway that runs or will run next (a
	// string); read without k.mu, because OAuth custody asks for it while
	// it records, which may be under k.mu.
	boot atomic.Value

	changes feed.Feed[State]
	// upstreamChanges announces a change of the upstream servers' states
	// or tools (SubscribeUpstreams).
	upstreamChanges feed.Feed[struct{}]
	unsub           func()
}

func (k *Keeper) getenv(key string) string {
	if k.cfg.Getenv != nil {
		return k.cfg.Getenv(key)
	}
	return os.Getenv(key)
}

// ExitReason is the reason the vault's lock is recorded with when a Keeper
// closes while it is unlocked.
const ExitReason = "yett_exit"

// Open starts keeping cfg.DataDir: it opens the audit log when the vault has
// an audit key (otherwise at its creation), starts OAuth custody, the
// catalogue and the gateway on it, and follows the vault from then on. A
// part that cannot start is logged and said in State; Open fails only on a
// bad Config.
func Open(cfg Config) (*Keeper, error) {
	if cfg.DataDir == "" || cfg.RuntimeDir == "" || cfg.Vault == nil {
		return nil, errors.New("keeper: DataDir, RuntimeDir and Vault are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	k := &Keeper{cfg: cfg, log: cfg.Logger, vault: cfg.Vault, dir: filepath.Join(cfg.DataDir, gateway.AuditDir)}
	k.notes, k.ctl = &notifications{Keeper: k}, &controlsPart{Keeper: k}
	k.shim = k.pinShim()
	// Subscribed before the gateway starts, so that for every vault event
	// the keeper records it (a lock) before the gateway acts on it (the
	// sessions it ends).
	k.mu.Lock()
	k.unsub = k.vault.Subscribe(k.onVaultEvent)
	k.boot.Store(gateway.NewBootID())
	k.notes.openNotificationsLocked()
	k.openSSHLocked()
	k.openAuditLocked()
	k.startLocked()
	k.mu.Unlock()
	return k, nil
}

// State returns what front ends read now.
func (k *Keeper) State() State {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stateLocked()
}

func (k *Keeper) stateLocked() State {
	st := State{OAuth: k.oauth, Operations: k.ops, Inventory: k.inventory.inv, AuditWriting: k.audit != nil, AuditProblem: k.problem, AuditHeldElsewhere: k.elsewhere, AuditRecipient: k.recipient, BootID: k.BootID(),
		GatewayProblem: k.gwProblem, Notifications: k.notes.notificationStatusLocked(), NotificationServer: k.NotificationServerState()}
	if k.gw != nil {
		st.Broker, st.SocketPath = k.gw.Broker(), k.gw.SocketPath()
	}
	return st
}

// Subscribe tells fn the new State whenever a part starts or stops or the
// audit log's state changes, as backend/feed delivers: in order, after the
// keeper's lock is released (fn may call any Keeper method).
func (k *Keeper) Subscribe(fn func(State)) (cancel func()) { return k.changes.Subscribe(fn) }

// AuditLog is the open audit log, for the read side (its head and its
// background verification); nil while it is not open. A vault reset closes
// it: ask again after a change.
func (k *Keeper) AuditLog() *audit.Log {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.audit
}

// AuditDir is where the log lives.
func (k *Keeper) AuditDir() string { return k.dir }

// BootID names the gateway in audit entries: the one that runs, or the one
// the next start will run. OAuth custody asks for it as it records.
func (k *Keeper) BootID() string {
	if k.cfg.NoGateway {
		return "" // no gateway runs in this process: its entries name none
	}
	s, _ := k.boot.Load().(string)
	return s
}

// Close locks the vault if it is unlocked (recorded with ExitReason), stops
// the gateway, the catalogue and OAuth custody, and closes the audit log
// with a final checkpoint. The vault itself stays open: the front end closes
// it. Safe to call twice.
func (k *Keeper) Close() error {
	if err := k.vault.Lock(ExitReason); err != nil && !errors.Is(err, vault.ErrLocked) {
		k.log.Warn("locking the vault at exit", "err", err)
	}
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	k.mu.Unlock()
	k.unsub()
	k.mu.Lock()
	k.stopLocked()
	err := k.closeAuditLocked()
	k.mu.Unlock()
	k.notes.closeNotifications()
	return err
}

// onVaultEvent records the event and follows it. It runs in the vault's
// delivery (backend/feed): in order, never under the vault's lock, so it may
// call back into the vault and start the gateway, which subscribes to it.
func (k *Keeper) onVaultEvent(e vault.Event) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return
	}
	switch e.Kind {
	case vault.EventCreated:
		// A reset and a new Create give the vault a new audit key: the
		// entries from now on must be readable with it.
		k.reopenIfRecipientChangedLocked()
		k.recordLocked(audit.Event{Type: audit.EventVaultUnlocked, VaultEpoch: e.Epoch, Reason: audit.ReasonVaultCreated})
		k.ctl.loadControlsLocked()
		k.startLocked()
		k.startTeamLocked()
	case vault.EventUnlocked:
		// The unlock authenticated the recipient. If it differs from the
		// one the log was opened with (read while locked, unauthenticated),
		// the entries written since were sealed to someone else's key.
		if k.audit != nil {
			if r, err := k.vault.AuditRecipient(); err == nil && r != k.recipient {
				k.log.Error("the audit recipient changed under a locked vault; reopening the log with the authenticated one")
				k.stopLocked()
				k.closeAuditLocked()
				k.problem = ""
				k.openAuditLocked()
				k.problem = "The audit key changed while the vault was locked: entries written before this unlock may not be readable."
			}
		}
		k.openAuditLocked()
		k.recordLocked(audit.Event{Type: audit.EventVaultUnlocked, VaultEpoch: e.Epoch})
		k.ctl.loadControlsLocked()
		running := k.gw != nil
		k.startLocked()
		if running {
			k.logGatewayReadyLocked() // startLocked logged it otherwise
			// The gateway kept running while locked: the server trusted
			// now is the one that owns the name at this unlock.
			k.notes.pinNotificationServerLocked()
		}
		// Drills that came due while the vault was locked (or Yett was
		// not running) can run now.
		k.kickInventoryLocked()
		k.startTeamLocked()
	case vault.EventLocked:
		k.recordLocked(audit.Event{Type: audit.EventVaultLocked, VaultEpoch: e.Epoch, Reason: lockReason(e)})
		// Also ends the writer's segment: a process that reads this one's
		// memory from now on finds no key to anything written before.
		var cp *audit.Checkpoint
		if k.audit != nil {
			if c, err := k.audit.Checkpoint(); err != nil {
				k.log.Error("audit checkpoint at lock", "err", err)
			} else {
				cp = &c
			}
		}
		// The team's syncer holds the machine's team key: it stops with
		// the lock, the lock's checkpoint queued for the team first.
		k.stopTeamLocked(cp)
	case vault.EventChanged:
		k.recordVaultChangeLocked(e)
		k.teamChangedLocked(e.Change)
	case vault.EventReset:
		k.stopLocked()
		k.setAsideLocked()
		k.boot.Store(gateway.NewBootID()) // the next gateway is another start
	default:
		k.mu.Unlock()
		return
	}
	st := k.stateLocked()
	k.mu.Unlock()
	if e.Kind == vault.EventUnlocked || e.Kind == vault.EventCreated {
		// The unlock's key derivation (Argon2id, 64 MiB) is garbage now;
		// hand it back to the system rather than wait for the scavenger.
		debug.FreeOSMemory()
	}
	k.changes.Publish(st)
}

// maxReasonLen bounds a recorded lock reason: a reason names why, it does
// not carry text (a damage description can be long).
const maxReasonLen = 64

// lockReason is the recorded reason of a lock: clipped, and saying so when
// the disk refused the new epoch.
func lockReason(e vault.Event) audit.Reason {
	r := e.Reason
	if len(r) > maxReasonLen {
		r = r[:maxReasonLen]
	}
	if e.EpochNotSaved {
		r += " " + string(audit.ReasonEpochNotSaved)
	}
	return audit.Reason(r)
}

// recordLocked appends an event of this keeper's with its boot id. A
// failure to write is shown, and refuses nothing by itself: the gateway
// fails closed on its own entries. k.mu held.
func (k *Keeper) recordLocked(e audit.Event) {
	if k.audit == nil {
		return
	}
	e.Time, e.BootID = time.Now().UTC(), k.BootID()
	if e.Surface == "" {
		e.Surface = k.cfg.Origin
	}
	if _, err := k.audit.Append(context.Background(), e); err != nil {
		k.problem = "Writing to the audit log failed; entries are not being recorded until Yett restarts."
		k.log.Error("audit append", "type", e.Type, "err", err)
	}
}

// pinShim hashes the yett CLI the gateway accepts as `yett mcp`.
func (k *Keeper) pinShim() [][32]byte {
	if k.cfg.NoGateway {
		return nil // no gateway to accept a shim
	}
	path := k.cfg.ShimPath
	if path == "" {
		k.log.Warn("no yett CLI to pin: the gateway accepts any program of this user on its socket")
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		k.log.Warn("no yett CLI to pin: the gateway accepts any program of this user on its socket", "looked_for", path)
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		k.log.Warn("cannot read the yett CLI to pin it", "path", path, "err", err)
		return nil
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return [][32]byte{sum}
}

// openAuditLocked opens the log if the vault has an audit key. If the vault
// has none yet (not set up), it stays closed until Create. Once the log was
// refused, it is not retried behind the person's back: a restart does.
// k.mu held.
func (k *Keeper) openAuditLocked() {
	if k.audit != nil || k.problem != "" {
		return
	}
	recipient, err := k.vault.AuditRecipient()
	if errors.Is(err, vault.ErrNoAuditKey) {
		return
	}
	if err != nil {
		k.problem = "The audit log is not being written: the vault's audit key cannot be read."
		k.log.Error("audit recipient", "err", err)
		return
	}
	r, err := age.ParseX25519Recipient(recipient)
	if err != nil {
		k.problem = "The audit log is not being written: the vault's audit key is malformed."
		return
	}
	w, rep, err := audit.Open(audit.Options{Dir: k.dir, Recipient: r, Carried: gateway.CarriedAudit(k.cfg.DataDir)})
	if err == nil && rep.Restored > 0 {
		k.log.Warn("audit log: put back records the file had lost, from the journal's copies", "records", rep.Restored)
	}
	switch {
	case errors.Is(err, audit.ErrTampered):
		// Never repaired: the evidence stays as found, and nothing is
		// appended after it.
		k.problem = "The audit log failed verification and is not being written to. It was left exactly as found."
	case errors.Is(err, audit.ErrLocked):
		k.problem = "The audit log is not being written by this process: another Yett (the app or yett serve) holds it."
		k.elsewhere = true
	case err != nil:
		k.problem = "The audit log could not be opened, so nothing is being recorded."
		k.log.Error("open audit log", "err", err)
	default:
		k.audit, k.recipient, k.problem, k.elsewhere = w, recipient, "", false
	}
}

// reopenIfRecipientChangedLocked: after a reset and a new Create the vault
// has a new audit key. k.mu held.
func (k *Keeper) reopenIfRecipientChangedLocked() {
	if k.audit != nil {
		if r, err := k.vault.AuditRecipient(); err == nil && r != k.recipient {
			k.stopLocked()
			k.closeAuditLocked()
		}
	}
	k.openAuditLocked()
}

// setAsideLocked: a vault reset sets the old vault file aside, and with it
// the only key that decrypts this log. The log is set aside beside it, as
// it is (never rewritten), and the next Create starts a new one. k.mu held.
func (k *Keeper) setAsideLocked() {
	k.closeAuditLocked()
	if _, err := os.Stat(k.dir); err != nil {
		return
	}
	aside := fmt.Sprintf("%s.reset-%d", k.dir, time.Now().Unix())
	if err := os.Rename(k.dir, aside); err != nil {
		k.problem = "The vault was reset but the old audit log could not be set aside; nothing is being recorded."
		k.log.Error("set aside audit log", "err", err)
		return
	}
	k.problem = ""
}

func (k *Keeper) closeAuditLocked() error {
	if k.audit == nil {
		return nil
	}
	err := k.audit.Close() // signs a final checkpoint
	if err != nil {
		k.log.Error("close audit log", "err", err)
	}
	k.audit = nil
	return err
}
