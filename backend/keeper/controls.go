package keeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/presence"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/vault"
)

// When the person's system verification is asked before an approval given
// in the window takes effect (Controls.Verification).
const (
	// VerifyEvery: every approval in the window.
	VerifyEvery = "every"
	// VerifySensitive: approvals of per-call cards (credentials, hosts and
	// operations the person marked "every call").
	VerifySensitive = "sensitive"
	// VerifyNever: a click or key in the window is enough.
	VerifyNever = "never"
)

// Controls are the person's choices about who may answer a card. They are
// sealed in the vault (vault.ControlsBlob), so a program of the user cannot
// loosen them on disk: before, notifications.json could be edited before
// the next start, unaudited. Every change is audited (vault_changed,
// controls_changed, with what changed).
type Controls struct {
	// Verification is VerifyEvery, VerifySensitive or VerifyNever; ""
	// means DefaultVerification for this desktop.
	Verification string `json:"verification,omitempty"`
	// Notifications is which cards a notification may answer (nil: the
	// default policy).
	Notifications *notify.Policy `json:"notifications,omitempty"`
	// BlockUncontrolled refuses every call that would use an owner
	// inventory row not under control (nil: off, only marked).
	BlockUncontrolled *bool `json:"block_uncontrolled,omitempty"`
	// NotificationServer is the notification server the person last
	// accepted in the window: an unlock trusts the server that owns the
	// name then only if it runs this program.
	NotificationServer *AcceptedServer `json:"notification_server,omitempty"`
}

// AcceptedServer is the program of a notification server the person
// accepted.
type AcceptedServer struct {
	Exe     string `json:"exe"`
	SHA256  string `json:"sha256"` // "sha256:<hex>" of the running image
	Product string `json:"product,omitempty"`
}

func (c Controls) blockUncontrolled() bool { return c.BlockUncontrolled != nil && *c.BlockUncontrolled }

// legacyBlock reads the block switch earlier versions kept in inventory.db.
func legacyBlock(dataDir string) bool {
	var on bool
	store.ReadLegacyTable(filepath.Join(dataDir, inventory.FileName), "settings", func(db *gorm.DB) error {
		return db.Raw(`SELECT block_uncontrolled FROM settings WHERE id = 1`).Scan(&on).Error
	})
	return on
}

// DefaultVerification is the verification asked when the person chose
// none: every approval where another program can drive the window's input
// (X11: XTest reaches any window), and per-call cards elsewhere; never where
// this build cannot verify (macOS and Windows, for now).
func DefaultVerification(getenv func(string) string) string {
	if runtime.GOOS != "linux" {
		return VerifyNever
	}
	if getenv("XDG_SESSION_TYPE") == "x11" || (getenv("DISPLAY") != "" && getenv("WAYLAND_DISPLAY") == "") {
		return VerifyEvery
	}
	return VerifySensitive
}

// VerificationWhy says, for Settings, why the default is what it is here.
func VerificationWhy(getenv func(string) string) string {
	switch DefaultVerification(getenv) {
	case VerifyEvery:
		return "On an X11 desktop any program you run, an agent among them, can send clicks and keys to Yett's window, so Yett asks your system to confirm it is you (your password, or your fingerprint where the desktop offers it) before each approval takes effect."
	case VerifySensitive:
		return "Other programs cannot type into Yett's window on this desktop, so a click is enough, except for credentials and hosts you marked for approval on every call."
	}
	return "System verification is not built for this operating system yet: approvals are taken from the window alone."
}

func (c Controls) verification(getenv func(string) string) string {
	switch c.Verification {
	case VerifyEvery, VerifySensitive, VerifyNever:
		return c.Verification
	}
	return DefaultVerification(getenv)
}

func (c Controls) notificationPolicy() notify.Policy {
	if c.Notifications == nil {
		return notify.DefaultPolicy()
	}
	p := *c.Notifications
	p.WindowOnly = append([]string{}, p.WindowOnly...)
	return p
}

// loadControlsLocked reads the sealed controls at unlock. A vault that has
// none yet takes the notification policy from the file earlier versions
// kept (once), seals it and removes the file; a policy file found once
// controls are sealed is ignored, and recorded, as the edit it would be.
// k.mu held; the vault is unlocked.
func (k *controlsPart) loadControlsLocked() {
	b, err := k.vault.ControlsBlob()
	if err != nil {
		return
	}
	legacy := filepath.Join(k.cfg.DataDir, notify.PolicyFile)
	_, statErr := os.Stat(legacy)
	fileThere := statErr == nil
	if b == nil {
		// Nothing set yet: the defaults, kept in memory until the person
		// changes a control. A policy an earlier version kept in a file is
		// sealed once and the file removed.
		k.controls.Store(&Controls{})
		c, from := Controls{}, []string{}
		if fileThere {
			if p, err := notify.LoadPolicy(k.cfg.DataDir); err == nil {
				c.Notifications, from = &p, append(from, notify.PolicyFile)
			} else {
				k.log.Warn("the old notification policy file could not be read; keeping the default", "err", err)
			}
		}
		if legacyBlock(k.cfg.DataDir) {
			on := true
			c.BlockUncontrolled, from = &on, append(from, inventory.FileName)
		}
		if len(from) > 0 {
			if err := k.saveControlsLocked(c, "controls sealed in the vault from "+strings.Join(from, " and ")); err != nil {
				k.log.Error("sealing the controls", "err", err)
			} else {
				k.controls.Store(&c)
				if fileThere {
					os.Remove(legacy)
				}
			}
		}
		k.applyControlsLocked()
		return
	}
	var c Controls
	if err := json.Unmarshal(b, &c); err != nil {
		// Authenticated by the vault, so written by Yett: fail closed.
		k.log.Error("the sealed controls do not decode; approvals need verification and notifications carry no buttons", "err", err)
		c = Controls{Verification: VerifyEvery, Notifications: &notify.Policy{WindowOnly: []string{}}}
	}
	k.controls.Store(&c)
	k.applyControlsLocked()
	if fileThere {
		k.recordLocked(audit.Event{Type: audit.EventVaultChanged, Reason: "ignored_control_file",
			VaultChange: &audit.VaultChange{Change: string(vault.ChangeControls), Name: notify.PolicyFile}})
		k.log.Warn("a notification policy file appeared in the data directory and was ignored: the policy is sealed in the vault", "file", legacy)
	}
}

// applyControlsLocked hands the controls to the parts that hold them in
// memory (the inventory's block switch). k.mu held.
func (k *controlsPart) applyControlsLocked() {
	if inv := k.inventory.inv; inv != nil {
		inv.UseBlockUncontrolled(k.currentControls().blockUncontrolled())
	}
}

// SetBlockUncontrolled seals the inventory's block switch and applies it;
// the inventory records the edit. Errors: vault.ErrLocked, and while no
// inventory runs, ErrNoInventory.
func (k *Keeper) SetBlockUncontrolled(ctx context.Context, on bool) error {
	k.mu.Lock()
	inv := k.inventory.inv
	k.mu.Unlock()
	if inv == nil {
		return ErrNoInventory
	}
	if err := k.ctl.changeControls(fmt.Sprintf("block uncontrolled: %v", on), func(c *Controls) { c.BlockUncontrolled = &on }); err != nil {
		return err
	}
	return inv.SetBlockUncontrolled(ctx, on)
}

// ErrNoInventory: the owner inventory does not run (the vault was never
// unlocked in this process, or OAuth custody could not start).
var ErrNoInventory = errors.New("keeper: the owner inventory is not running")

// saveControlsLocked seals c; the vault's event records the change. k.mu
// held: only from inside the vault's own delivery (onVaultEvent), where the
// vault queues the event it announces instead of delivering it at once.
func (k *controlsPart) saveControlsLocked(c Controls, why string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return k.vault.SetControlsBlob(b, why)
}

// changeControls applies change to the controls, seals them and keeps them,
// one writer at a time, without k.mu while the vault writes: the vault
// announces the change to the keeper, which takes k.mu to record it.
func (k *controlsPart) changeControls(why string, change func(*Controls)) error {
	k.controlsMu.Lock()
	defer k.controlsMu.Unlock()
	c := k.currentControls()
	change(&c)
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := k.vault.SetControlsBlob(b, why); err != nil {
		return err
	}
	k.controls.Store(&c)
	k.mu.Lock()
	rl, st := k.notes.relay, k.stateLocked()
	k.mu.Unlock()
	if rl != nil {
		rl.Resync()
	}
	k.changes.Publish(st)
	return nil
}

// Verification is when system verification is asked now, and why the
// default is what it is.
func (k *Keeper) Verification() (mode, why string) {
	return k.ctl.currentControls().verification(k.getenv), VerificationWhy(k.getenv)
}

// currentControls is a copy of the controls in force (the defaults before
// the first unlock).
func (k *controlsPart) currentControls() Controls {
	if c := k.controls.Load(); c != nil {
		out := *c
		if out.Notifications != nil {
			p := out.Notifications.Clone()
			out.Notifications = &p
		}
		return out
	}
	return Controls{}
}

// SetVerification seals mode (VerifyEvery, VerifySensitive, VerifyNever).
// Errors: vault.ErrLocked, vault.ErrInvalid.
func (k *Keeper) SetVerification(mode string) error {
	switch mode {
	case VerifyEvery, VerifySensitive, VerifyNever:
	default:
		return fmt.Errorf("%w: verification is every, sensitive or never", vault.ErrInvalid)
	}
	return k.ctl.changeControls("verification: "+mode, func(c *Controls) { c.Verification = mode })
}

// verifier is the broker's Verifier: the OS's verification, asked as the
// sealed controls say.
type verifier struct{ k *Keeper }

// Required: an answer from a notification always needs it (a notification
// server takes orders from any process of the user: dunstctl); one at yett
// serve's terminal never does (its one-time code is the proof); one in the
// window as the person chose.
func (v verifier) Required(r approval.Request, via approval.Via) bool {
	switch via.Surface {
	case approval.SurfaceNotification:
		return true
	case approval.SurfaceTerminal:
		return false
	case approval.SurfaceApp:
		mode := v.k.ctl.currentControls().verification(v.k.getenv)
		return mode == VerifyEvery || (mode == VerifySensitive && r.Kind == approval.KindCall)
	}
	return true
}

func (v verifier) Verify(ctx context.Context, r approval.Request) (string, error) {
	return v.k.ctl.presence().Verify(ctx, presence.Request{Card: r.ID, Summary: r.Headline() + ": " + r.Who.Program() + " wants " + r.Target})
}

func (k *controlsPart) presence() presence.Verifier {
	if k.cfg.Presence != nil {
		return k.cfg.Presence
	}
	return presence.Default()
}

// CanVerify reports whether the person can be verified here now, and if
// not why; cached for a few seconds (it asks the system bus).
func (k *Keeper) CanVerify() (bool, string) {
	k.verifyMu.Lock()
	defer k.verifyMu.Unlock()
	if time.Since(k.verifyAt) < 5*time.Second {
		return k.verifyOK, k.verifyWhy
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	ok, why := k.ctl.presence().Available(ctx)
	cancel()
	k.verifyOK, k.verifyWhy, k.verifyAt = ok, why, time.Now()
	return ok, why
}

// controlsPart is the keeper's role of the sealed controls: reading them at
// unlock, applying and saving a change, and asking the person's system to
// confirm it is them. Its state is the Keeper's controls fields.
type controlsPart struct{ *Keeper }
