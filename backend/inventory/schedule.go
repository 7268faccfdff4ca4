package inventory

import (
	"time"
)

// schedule looks for due reviews and drills at start, every Tick and
// whenever Kick is called.
func (inv *Inventory) schedule() {
	defer inv.wg.Done()
	t := time.NewTicker(inv.cfg.Tick)
	defer t.Stop()
	for {
		inv.due()
		select {
		case <-inv.ctx.Done():
			return
		case <-t.C:
		case <-inv.kick:
		}
	}
}

// due raises the reminders of reviews and full drills that came due, once
// each, and runs the unattended drills that are due, one after another. A
// drill missed while Yett was not running is due at its next start. An
// inventory that cannot be read now (the vault is locked) waits.
func (inv *Inventory) due() {
	rows, err := inv.rows(inv.ctx)
	if err != nil {
		inv.log.Warn("the inventory could not be read for its schedule", "err", err)
		return
	}
	now := inv.now()
	for _, r := range rows {
		if inv.ctx.Err() != nil {
			return
		}
		if r.ReviewDue && live(r.State) && inv.claim("review_notified", r.ID, r.ReviewBy.Unix()) {
			inv.remind(Reminder{Kind: ReminderReviewDue, RowID: r.ID, Title: "Review due: " + r.Name,
				Body: "Its expiry review date, " + r.ReviewBy.Format(DateLayout) + ", has come: check it is still needed, by whom, and set the next review in the Inventory."})
		}
		if !r.Drillable || r.State != "active" || r.Drilling || now.Before(r.NextDrill) {
			continue
		}
		switch r.DrillKind {
		case DrillFull:
			if inv.claim("drill_notified", r.ID, r.NextDrill.Unix()) {
				inv.remind(Reminder{Kind: ReminderFullDrillDue, RowID: r.ID, Title: "Full revocation drill due: " + r.Name,
					Body: "Its scheduled full drill is due. It revokes the authorization, so it waits for its owner: start it from the Inventory, then reconnect."})
			}
		case DrillUnattended:
			if !inv.cfg.Host.Ready() {
				continue // at the next look, once the vault is unlocked and the gateway serves
			}
			if _, err := inv.RunDrill(inv.ctx, r.ID, DrillUnattended, TriggerSchedule); err != nil {
				inv.log.Warn("a scheduled drill did not run", "authorization", r.ID, "err", err)
			}
		}
	}
}

// claim records that the reminder of col for row id at value was raised;
// false when it was already.
func (inv *Inventory) claim(col, id string, value int64) bool {
	res := inv.db.Exec(`UPDATE inventory_rows SET `+col+` = ? WHERE id = ? AND `+col+` != ?`, value, id, value)
	return res.Error == nil && res.RowsAffected == 1
}

func (inv *Inventory) remind(r Reminder) {
	if inv.cfg.Notifier != nil {
		inv.cfg.Notifier.Remind(r)
	}
	inv.changes.Publish(Change{Row: r.RowID})
}
