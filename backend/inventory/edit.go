package inventory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/audit"
)

// Fields a person edits in the table (SetField).
const (
	FieldOwner         = "owner"
	FieldBackupRevoker = "backup_revoker"
	FieldEnvironment   = "environment"
	FieldReviewBy      = "review_by"
)

// Environments a row belongs to.
var Environments = []string{"development", "staging", "production"}

// DateLayout is how review dates are written (SetField).
const DateLayout = "2006-01-02"

// SetField sets one editable column of row id: the owner, the backup
// revoker, the environment (development, staging or production) or the
// review date (YYYY-MM-DD, "" for none). An empty owner, backup revoker or
// review date is allowed: the row is then not under control, and says so.
// Every edit is an audit entry (inventory_edited) with the field and its
// new value.
func (inv *Inventory) SetField(ctx context.Context, id, field, value string) error {
	value = strings.TrimSpace(value)
	if len(value) > 256 || !utf8.ValidString(value) || strings.ContainsAny(value, "\x00\r\n") {
		return fmt.Errorf("%w: %s must be at most 256 characters on one line", ErrInvalid, fieldWord(field))
	}
	f, err := inv.fact(ctx, id)
	if err != nil {
		return err
	}
	col := ""
	var arg any = value
	switch field {
	case FieldOwner, FieldBackupRevoker:
		col = field
		if f.OwnersHeld {
			// The source keeps them (an SSH host's record): the edit goes
			// there, and the inventory keeps no copy of its own.
			if f.owners == nil {
				return ErrConfig
			}
			owner, backup := value, f.Declared.BackupRevoker
			if field == FieldBackupRevoker {
				owner, backup = f.Declared.Owner, value
			}
			if err := f.owners.SetOwners(ctx, id, owner, backup); err != nil {
				return err
			}
			col = ""
		}
	case FieldEnvironment:
		if !slices.Contains(Environments, value) {
			return fmt.Errorf("%w: environment must be development, staging or production", ErrInvalid)
		}
		if f.Kind == KindOAuth {
			if inv.cfg.Environments == nil {
				return ErrConfig
			}
			// Custody names it on cards and in its audit entries: it
			// keeps the OAuth row's environment.
			if err := inv.cfg.Environments.SetEnvironment(id, value); err != nil {
				return err
			}
		}
		col = "environment"
	case FieldReviewBy:
		col = "review_by"
		arg = int64(0)
		if value != "" {
			d, err := time.Parse(DateLayout, value)
			if err != nil {
				return fmt.Errorf("%w: a review date is written YYYY-MM-DD", ErrInvalid)
			}
			arg = d.Unix()
		}
	default:
		return fmt.Errorf("%w: %q is not an editable column", ErrInvalid, clip(field, 40))
	}
	if col != "" {
		if err := inv.db.Exec(`UPDATE inventory_rows SET `+col+` = ? WHERE id = ?`, arg, id).Error; err != nil {
			return fmt.Errorf("inventory: %w", err)
		}
	}
	inv.record(ctx, audit.Event{Type: audit.EventInventoryEdited, AuthorizationID: id,
		Inventory: &audit.InventoryEdit{Field: field, Value: value}})
	inv.dirty.Store(true)
	inv.changes.Publish(Change{Row: id})
	return nil
}

// Declare records who answers for row id and where it serves, as the form
// or command that added it said: each of owner, backupRevoker and env that
// is not empty is written with SetField (so each is its own audit entry);
// an empty one is left as it is.
func (inv *Inventory) Declare(ctx context.Context, id, owner, backupRevoker, env string) error {
	for _, f := range []struct{ field, value string }{
		{FieldOwner, owner}, {FieldBackupRevoker, backupRevoker}, {FieldEnvironment, env},
	} {
		if strings.TrimSpace(f.value) == "" {
			continue
		}
		if err := inv.SetField(ctx, id, f.field, f.value); err != nil {
			return err
		}
	}
	return nil
}

func fieldWord(field string) string {
	switch field {
	case FieldBackupRevoker:
		return "the backup revoker"
	case FieldReviewBy:
		return "the review date"
	}
	return "the value"
}

// fact finds row id among the sources' facts and makes sure it has a
// record.
func (inv *Inventory) fact(ctx context.Context, id string) (Fact, error) {
	facts, err := inv.facts(ctx)
	if err != nil {
		return Fact{}, err
	}
	for _, f := range facts {
		if f.ID == id {
			if _, err := inv.records([]Fact{f}); err != nil {
				return Fact{}, err
			}
			return f, nil
		}
	}
	return Fact{}, ErrNotFound
}

// Settings are the inventory's policy switches.
type Settings struct {
	// BlockUncontrolled refuses every call that would use a row not under
	// control; off (the default) only marks such rows.
	BlockUncontrolled bool `json:"block_uncontrolled"`
}

// Settings returns the switches.
func (inv *Inventory) Settings() Settings { return Settings{BlockUncontrolled: inv.block.Load()} }

// SetBlockUncontrolled sets the switch, for every row (OAuth and HTTP
// credentials alike). Audited. It is not kept here: the switch loosens a
// control, so the composition root seals it in the vault (keeper's
// controls) and hands it to the inventory at each start (UseBlockUncontrolled);
// inventory.db's column is read only once, by the keeper, to carry an
// earlier version's choice over.
func (inv *Inventory) SetBlockUncontrolled(ctx context.Context, on bool) error {
	inv.UseBlockUncontrolled(on)
	inv.record(ctx, audit.Event{Type: audit.EventInventoryEdited, Inventory: &audit.InventoryEdit{Field: "block_uncontrolled", Value: strconv.FormatBool(on)}})
	return nil
}

// UseBlockUncontrolled sets the switch as the sealed controls hold it,
// without recording anything.
func (inv *Inventory) UseBlockUncontrolled(on bool) {
	inv.block.Store(on)
	inv.dirty.Store(true)
	inv.changes.Publish(Change{})
}

// SetDrillSchedule sets how often row id is drilled (1 to 3650 days) and
// which kind of drill the schedule runs: an unattended one runs by itself;
// a full one raises a reminder and waits for its owner. Audited.
func (inv *Inventory) SetDrillSchedule(ctx context.Context, id string, everyDays int, kind string) error {
	if everyDays < 1 || everyDays > 3650 {
		return fmt.Errorf("%w: a drill schedule is 1 to 3650 days", ErrInvalid)
	}
	if kind != DrillFull && kind != DrillUnattended {
		return fmt.Errorf("%w: a scheduled drill is full or unattended", ErrInvalid)
	}
	f, err := inv.fact(ctx, id)
	if err != nil {
		return err
	}
	if !f.Drillable {
		return ErrNotDrillable
	}
	if err := inv.db.Exec(`UPDATE inventory_rows SET drill_every_days = ?, drill_kind = ?, drill_notified = 0 WHERE id = ?`, everyDays, kind, id).Error; err != nil {
		return fmt.Errorf("inventory: %w", err)
	}
	inv.record(ctx, audit.Event{Type: audit.EventInventoryEdited, AuthorizationID: id,
		Inventory: &audit.InventoryEdit{Field: "drill_schedule", Value: fmt.Sprintf("%s every %d days", kind, everyDays)}})
	inv.changes.Publish(Change{Row: id})
	inv.Kick()
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// OwnerOf is the owner the inventory holds for row id (an OAuth
// authorization's, for custody's audit entries: oauth.Owners); false when
// it has no record of the row yet. It reads the inventory's own table
// only, never a source, so custody may ask while it records.
func (inv *Inventory) OwnerOf(id string) (string, bool) {
	var owners []string
	if err := inv.db.Raw(`SELECT owner FROM inventory_rows WHERE id = ?`, id).Scan(&owners).Error; err != nil || len(owners) != 1 {
		return "", false
	}
	return owners[0], true
}
