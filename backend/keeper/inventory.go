package keeper

import (
	"iter"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
)

// inventoryPart is the keeper's part that runs the owner inventory and its
// revocation drills, with OAuth custody and on the same audit log: its
// scheduler runs here, so `yett serve` runs due unattended drills as the
// app does, and a drill's client calls through the gateway this keeper
// runs.
type inventoryPart struct {
	inv *inventory.Inventory // k.mu
	// gw is the running gateway, read by drills without k.mu (the keeper
	// holds k.mu while it closes the inventory and waits for a drill).
	gw atomic.Pointer[gateway.Gateway]
	// notifier is the desktop's notifications, captured at open for the
	// same reason.
	notifier  notify.Notifier
	reminders feed.Feed[inventory.Reminder]
}

// openInventoryLocked opens the inventory over OAuth custody, the
// catalogue and the vault's credentials. k.mu held, k.oauth and k.ops set.
func (k *Keeper) openInventoryLocked() {
	if k.inventory.inv != nil || k.oauth == nil {
		return
	}
	k.inventory.notifier = k.notes.notifier
	m, ops, v := k.oauth, k.ops, k.vault
	inv, err := inventory.Open(inventory.Config{
		DataDir: k.cfg.DataDir, Audit: k.audit, Host: inventoryHost{k}, Logger: k.log, Surface: k.cfg.Origin,
		Sources: []inventory.Source{inventory.OAuthSource{Custody: m, Operations: ops, MCPServers: v.MCPServers()}, inventory.CredentialSource{Vault: v.Credentials()}, inventory.SSHSource{Vault: v.SSHHosts()}, inventory.MCPSource{Vault: v.MCPServers()}},
		Custody: m, Environments: m, Catalogue: ops, Bindings: v.Credentials(),
		Trail:       keeperTrail{k},
		Notifier:    reminder{k},
		NoScheduler: k.cfg.NoGateway,
	})
	if err != nil {
		k.log.Error("the owner inventory is unavailable", "err", err)
		return
	}
	k.inventory.inv = inv
	inv.UseBlockUncontrolled(k.ctl.currentControls().blockUncontrolled())
	// Custody's audit entries name the owner the inventory holds.
	m.SetOwners(inv)
}

// closeInventoryLocked stops the inventory first: a running drill stops
// where it is safe while the gateway and custody it uses still run.
// k.mu held.
func (k *Keeper) closeInventoryLocked() {
	k.inventory.gw.Store(nil)
	if k.oauth != nil {
		k.oauth.SetOwners(nil)
	}
	if k.inventory.inv != nil {
		if err := k.inventory.inv.Close(); err != nil {
			k.log.Warn("close the owner inventory", "err", err)
		}
		k.inventory.inv = nil
	}
}

// gatewayStartedLocked lets drills call through gw and the scheduler look
// for drills that came due while no gateway ran. k.mu held.
func (k *Keeper) gatewayStartedLocked(gw *gateway.Gateway) {
	k.inventory.gw.Store(gw)
	if k.inventory.inv != nil {
		k.inventory.inv.Kick()
	}
}

func (k *Keeper) drillGateway() inventory.Gateway {
	if gw := k.inventory.gw.Load(); gw != nil {
		return gw
	}
	return nil
}

// SubscribeReminders tells fn every reminder the inventory raises to the
// owner (a review due, a full drill due, a drill that failed), as
// backend/feed delivers; the desktop's notifications show them too.
func (k *Keeper) SubscribeReminders(fn func(inventory.Reminder)) (cancel func()) {
	return k.inventory.reminders.Subscribe(fn)
}

// reminder raises the inventory's reminders as notifications (clicking one
// raises the window) and to the front end's subscribers.
type reminder struct{ k *Keeper }

func (r reminder) Remind(rem inventory.Reminder) {
	if n := r.k.inventory.notifier; n != nil {
		if err := n.Show(notify.Notification{Card: "inventory-" + rem.Kind + "-" + rem.RowID, Title: rem.Title, Body: rem.Body}); err != nil {
			r.k.log.Info("an inventory reminder could not be shown as a notification", "kind", rem.Kind)
		}
	}
	r.k.inventory.reminders.Publish(rem)
}

// keeperTrail reads the audit log this keeper writes, with the vault's
// audit identity: only while the vault is unlocked.
type keeperTrail struct{ k *Keeper }

func (t keeperTrail) Entries(from audit.Position) iter.Seq2[audit.Entry, error] {
	id, err := t.k.vault.AuditIdentity()
	if err != nil {
		return func(yield func(audit.Entry, error) bool) { yield(audit.Entry{}, err) }
	}
	return audit.ReadEventsFrom(filepath.Join(t.k.dir, audit.LogFile), id, from)
}

// kickInventoryLocked makes the scheduler look for due drills now. k.mu
// held.
func (k *Keeper) kickInventoryLocked() {
	if k.inventory.inv != nil {
		k.inventory.inv.Kick()
	}
}

// inventoryHost is the keeper as the owner inventory's host.
type inventoryHost struct{ k *Keeper }

func (h inventoryHost) BootID() string             { return h.k.BootID() }
func (h inventoryHost) Gateway() inventory.Gateway { return h.k.drillGateway() }
func (h inventoryHost) Now() time.Time             { return time.Now() }

// Changes follows custody, the catalogue and the vault: each can change
// the rows or whether they are under control.
func (h inventoryHost) Changes(fn func()) (cancel func()) {
	k := h.k
	a := k.oauth.Subscribe(func(oauth.Event) { fn() })
	b := k.ops.Subscribe(fn)
	c := k.vault.Subscribe(func(vault.Event) { fn() })
	return func() { a(); b(); c() }
}

// Ready: a scheduled drill runs while the vault is unlocked (custody opens
// its tokens) and a gateway serves (the drill client calls through it).
func (h inventoryHost) Ready() bool {
	return h.k.vault.Status().State == vault.StateUnlocked && h.k.inventory.gw.Load() != nil
}
