package inventory

import (
	"encoding/json"
	"errors"
	"iter"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/store"
)

// Trail reads the audit log from a position an earlier entry returned
// (the zero Position is the start). It yields an error while the log
// cannot be read (the vault is locked).
type Trail interface {
	Entries(from audit.Position) iter.Seq2[audit.Entry, error]
}

// confirmedUse: an action's outcome entry says the request was answered.
func confirmedUse(ev *audit.Event) (string, bool) {
	if ev.Type != audit.EventActionResult || ev.Action == nil || ev.Action.CredentialRef == "" || ev.Result == nil {
		return "", false
	}
	switch ev.Result.Class {
	case audit.ResultSuccess, audit.ResultClientError, audit.ResultServerError:
		return ev.Action.CredentialRef, true
	}
	return "", false
}

// catchUpUses reads the audit log from where the last catch-up stopped and
// keeps each credential's and authorization's last confirmed use. It reads
// nothing while the log cannot be read; the uses kept stand.
func (inv *Inventory) catchUpUses() {
	if inv.cfg.Trail == nil {
		return
	}
	inv.usesMu.Lock()
	defer inv.usesMu.Unlock()
	if !inv.catchUpFrom() {
		// Another log (a reset set the old one aside): start over.
		inv.db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(`DELETE FROM uses`).Error; err != nil {
				return err
			}
			return tx.Exec(`UPDATE settings SET audit_position = '' WHERE id = 1`).Error
		})
		inv.catchUpFrom()
	}
}

// catchUpFrom is one catch-up from the stored position; false when that
// position is not one of this log's. inv.usesMu held.
func (inv *Inventory) catchUpFrom() bool {
	var raw string
	inv.db.Raw(`SELECT audit_position FROM settings WHERE id = 1`).Scan(&raw)
	var from audit.Position
	if raw != "" && json.Unmarshal([]byte(raw), &from) != nil {
		from = audit.Position{}
	}
	last := map[string]int64{}
	next, read := from, 0
	for e, err := range inv.cfg.Trail.Entries(from) {
		if errors.Is(err, audit.ErrBadPosition) && from != (audit.Position{}) {
			return false
		}
		if err != nil {
			break
		}
		read++
		next = e.Next
		if ref, ok := confirmedUse(&e.Event); ok && e.Event.Time.Unix() > last[ref] {
			last[ref] = e.Event.Time.Unix()
		}
	}
	if read == 0 {
		return true
	}
	pos, _ := json.Marshal(next)
	err := inv.db.Transaction(func(tx *gorm.DB) error {
		for ref, t := range last {
			if err := tx.Exec(`INSERT INTO uses (ref, last_use) VALUES (?, ?) ON CONFLICT(ref) DO UPDATE SET last_use = MAX(last_use, excluded.last_use)`, ref, t).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`UPDATE settings SET audit_position = ? WHERE id = 1`, string(pos)).Error
	})
	if err != nil {
		inv.log.Warn("the last uses could not be stored", "err", err)
	}
	return true
}

// uses returns every ref's last confirmed use.
func (inv *Inventory) uses() (map[string]time.Time, error) {
	var rows []struct {
		Ref     string
		LastUse int64
	}
	if err := inv.db.Raw(`SELECT ref, last_use FROM uses`).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.Ref] = store.FromUnixSeconds(r.LastUse)
	}
	return out, nil
}
