package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
)

// Events about the owner inventory. EventInventoryChanged has no payload:
// the UI re-reads the table. EventInventoryDrill carries a DrillReportView
// after every step of a running drill and once it ended.
const (
	EventInventoryChanged = "inventory:changed"
	EventInventoryDrill   = "inventory:drill"
)

// errNoInventory is what the UI is told while no inventory runs: it needs
// OAuth custody, which needs the vault's audit key.
var errNoInventory = shown("Set up and unlock the vault first.")

// InventoryService is bound to the UI as window.go.app.InventoryService. It
// is the desktop's side of the owner inventory (backend/inventory, run by
// the keeper): the table, its inline edits (each audited by the
// inventory), its exports, the drill schedule and the revocation drills
// with their reports. Every view is built from inventory rows and drill
// reports, which hold no secret and no token by construction.
type InventoryService struct {
	events *eventSink
	log    *slog.Logger

	mu     sync.Mutex
	inv    *inventory.Inventory
	cancel func()
	// setBlock seals the block switch through the keeper (its controls);
	// nil in tests that run an inventory alone, which then set it on the
	// inventory directly.
	setBlock func(context.Context, bool) error

	// saveDialog asks the person where to save an export; "" means
	// cancelled. The app sets it once the window exists; tests to a fake.
	dialogMu   sync.Mutex
	saveDialog func(title, defaultName string) (string, error)

	announce *announcer // EventInventoryChanged (and EventSSHChanged)
}

func newInventoryService(events *eventSink, log *slog.Logger) *InventoryService {
	s := &InventoryService{events: events, log: log}
	s.announce = newAnnouncer(0, func() {
		s.events.send(EventInventoryChanged, nil)
		// The Hosts view shows the inventory's verdict on each host
		// (SSHService.overlayInventory): it reads again too.
		s.events.send(EventSSHChanged, nil)
	})
	s.saveDialog = func(string, string) (string, error) { return "", errors.New("no window to show a dialog in") }
	return s
}

// changed is the inventory's subscription.
func (s *InventoryService) changed() { s.announce.changed() }

// attach serves inv from now on (nil detaches). The keeper owns it.
func (s *InventoryService) attach(inv *inventory.Inventory) {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	s.inv = inv
	if inv != nil {
		s.cancel = inv.Subscribe(func(c inventory.Change) {
			if c.Drill != nil {
				s.events.send(EventInventoryDrill, drillReportView(*c.Drill))
			}
			s.changed()
		})
	}
	s.mu.Unlock()
	s.changed()
}

func (s *InventoryService) close() {
	if s == nil {
		return
	}
	s.attach(nil)
	s.announce.close()
}

func (s *InventoryService) inventory() (*inventory.Inventory, error) {
	if s == nil {
		return nil, errNoInventory
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inv == nil {
		return nil, errNoInventory
	}
	return s.inv, nil
}

func (s *InventoryService) setSaveDialog(f func(title, name string) (string, error)) {
	s.dialogMu.Lock()
	s.saveDialog = f
	s.dialogMu.Unlock()
}

// inventoryTimeout bounds what a table read or an edit may take.
const inventoryTimeout = 30 * time.Second

// rowsByID reads every inventory row, keyed by its authorization's id, for
// a view that lays the inventory's verdict over its own cards (what names
// the view in the warning). nil when there is no inventory or it cannot be
// read: the view then shows its cards as they are.
func (s *InventoryService) rowsByID(log *slog.Logger, what string) map[string]inventory.Row {
	inv, err := s.inventory()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	rows, err := inv.Rows(ctx, inventory.Filter{})
	if err != nil {
		log.Warn("the owner inventory could not be read for "+what, "err", err)
		return nil
	}
	byID := make(map[string]inventory.Row, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	return byID
}

// Rows lists every row of the inventory. The table sorts and filters them
// itself; Export takes the same filter.
func (s *InventoryService) Rows() ([]InventoryRowView, error) {
	inv, err := s.inventory()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	rows, err := inv.Rows(ctx, inventory.Filter{})
	if err != nil {
		return nil, s.publicError("list the inventory", err)
	}
	out := make([]InventoryRowView, 0, len(rows))
	for _, r := range rows {
		out = append(out, inventoryRowView(r))
	}
	return out, nil
}

// SetField edits one column of a row: owner, backup_revoker, environment
// or review_by (YYYY-MM-DD, "" for none). The inventory audits each edit.
func (s *InventoryService) SetField(id, field, value string) error {
	inv, err := s.inventory()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	return s.publicError("edit the inventory", inv.SetField(ctx, id, field, value))
}

// declare records who answers for row id (named name) and where it serves,
// as the form that added it said (inventory.Declare: each field given is
// written, an empty one is left unset). The row was added already: a
// failure says so and what to do.
func (s *InventoryService) declare(id, name, owner, backupRevoker, env string) error {
	if s == nil || (owner == "" && backupRevoker == "" && env == "") {
		return nil
	}
	inv, err := s.inventory()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
		defer cancel()
		err = s.publicError("edit the inventory", inv.Declare(ctx, id, owner, backupRevoker, env))
	}
	if err != nil {
		return shown("Added “" + name + "”, but who answers for it could not be recorded: " + err.Error() + " Set it in the Inventory.")
	}
	return nil
}

// SetDrillSchedule sets how often a row is drilled and which kind of drill
// the schedule runs.
func (s *InventoryService) SetDrillSchedule(id string, everyDays int, kind string) error {
	inv, err := s.inventory()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	return s.publicError("set the drill schedule", inv.SetDrillSchedule(ctx, id, everyDays, kind))
}

// Settings returns the inventory's switches.
func (s *InventoryService) Settings() (InventorySettingsView, error) {
	inv, err := s.inventory()
	if err != nil {
		return InventorySettingsView{}, err
	}
	return InventorySettingsView{BlockUncontrolled: inv.Settings().BlockUncontrolled}, nil
}

// SetBlockUncontrolled refuses (on) or only marks (off) every call that
// would use a row not under control.
func (s *InventoryService) SetBlockUncontrolled(on bool) error {
	inv, err := s.inventory()
	if err != nil {
		return err
	}
	if s.setBlock != nil {
		err := s.setBlock(context.Background(), on)
		if errors.Is(err, vault.ErrLocked) {
			return shown("Unlock the vault to change this: it is kept sealed in the vault, where no other program can change it.")
		}
		return s.publicError("set block uncontrolled", err)
	}
	return s.publicError("set block uncontrolled", inv.SetBlockUncontrolled(context.Background(), on))
}

// RunDrill runs a drill of kind ("full" or "unattended") on authorization
// id and returns its report once it ended; EventInventoryDrill reports it
// step by step meanwhile. The window asks the person to confirm a full
// drill, which ends with the authorization revoked.
func (s *InventoryService) RunDrill(id, kind string) (DrillReportView, error) {
	inv, err := s.inventory()
	if err != nil {
		return DrillReportView{}, err
	}
	rep, err := inv.RunDrill(context.Background(), id, kind, inventory.TriggerPerson)
	if err != nil {
		return DrillReportView{}, s.publicError("run a drill", err)
	}
	return drillReportView(rep), nil
}

// Drills lists authorization id's drill reports, newest first ("" for
// every authorization's).
func (s *InventoryService) Drills(id string) ([]DrillReportView, error) {
	inv, err := s.inventory()
	if err != nil {
		return nil, err
	}
	reps, err := inv.Drills(id, 50)
	if err != nil {
		return nil, s.publicError("list drills", err)
	}
	out := make([]DrillReportView, 0, len(reps))
	for _, r := range reps {
		out = append(out, drillReportView(r))
	}
	return out, nil
}

// Export saves the rows that pass the filter as CSV or JSON where the
// person chooses. Rows hold no secret and no token, so neither does the
// file.
func (s *InventoryService) Export(format string, f InventoryFilter) (ExportResult, error) {
	if format != inventory.FormatCSV && format != inventory.FormatJSON {
		return ExportResult{}, shown("Export as CSV or JSON.")
	}
	inv, err := s.inventory()
	if err != nil {
		return ExportResult{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	b, err := inv.Export(ctx, inventory.Filter{Text: f.Text, State: f.State}, format)
	if err != nil {
		return ExportResult{}, s.publicError("export the inventory", err)
	}
	name := fmt.Sprintf("yett-inventory-%s.%s", time.Now().UTC().Format("2006-01-02"), format)
	return s.save("Export the owner inventory", name, b)
}

// ExportDrill saves one drill's report as JSON where the person chooses.
func (s *InventoryService) ExportDrill(drillID string) (ExportResult, error) {
	inv, err := s.inventory()
	if err != nil {
		return ExportResult{}, err
	}
	b, err := inv.ExportDrill(drillID)
	if err != nil {
		return ExportResult{}, s.publicError("export a drill", err)
	}
	return s.save("Export the drill report", "yett-drill-"+strings.TrimPrefix(drillID, "dr-")+".json", b)
}

func (s *InventoryService) save(title, name string, b []byte) (ExportResult, error) {
	s.dialogMu.Lock()
	dialog := s.saveDialog
	s.dialogMu.Unlock()
	path, err := dialog(title, name)
	if err != nil {
		s.log.Error("save dialog", "err", err)
		return ExportResult{}, shown("The save dialog could not be shown.")
	}
	if path == "" {
		return ExportResult{Saved: false, Size: len(b)}, nil
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.log.Error("write an inventory export", "err", err)
		return ExportResult{}, shown("The file could not be saved there.")
	}
	return ExportResult{Saved: true, Path: path, Size: len(b)}, nil
}

// inventoryTexts: the inventory's documented errors name a field and a
// rule, never a value.
var inventoryTexts = []known{
	{vault.ErrLocked, string(errNoInventory)}, {vault.ErrNotInitialised, string(errNoInventory)},
	{inventory.ErrNotFound, "There is no such row in the inventory."},
	{inventory.ErrDrillRunning, "A drill of this authorization is running already."},
	{inventory.ErrNotDrillable, "This row cannot be drilled now: drills apply to OAuth authorizations that are active (a full drill also takes a suspended one)."},
	{inventory.ErrConfig, "Drills cannot run in this Yett: OAuth custody is not running."},
	{err: inventory.ErrInvalid}, {err: oauth.ErrInvalid},
}

func (s *InventoryService) publicError(what string, err error) error {
	return publicError(s.log, "inventory: "+what, err, inventoryTexts)
}
