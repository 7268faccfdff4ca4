package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/inventory"
)

// Connections shows each authorization's owner, backup revoker, review
// date and whether it is under control; the owner inventory
// (backend/inventory) is what holds and enforces them, so the cards read
// them from it and write them through it (each edit audited there), and the
// block-uncontrolled switch on Connections is the inventory's. OAuth custody
// keeps custody only.

// owners is the inventory the OAuth service reads owners from; nil while
// none runs.
func (s *OAuthService) owners() *inventory.Inventory {
	if s.inventory == nil {
		return nil
	}
	inv, err := s.inventory.inventory()
	if err != nil {
		return nil
	}
	return inv
}

// overlayInventory replaces what a person answers for on each card with
// the inventory's row of it.
func (s *OAuthService) overlayInventory(views []AuthorizationView) {
	if len(views) == 0 {
		return
	}
	byID := s.inventory.rowsByID(s.log, "Connections")
	for i := range views {
		r, ok := byID[views[i].ID]
		if !ok {
			continue
		}
		v := &views[i]
		v.Owner, v.BackupRevoker, v.ReviewBy, v.Environment = r.Owner, r.BackupRevoker, rfc3339(r.ReviewBy), r.Environment
		v.Controlled = r.Controlled
		v.Problems = inventoryProblems(r)
	}
}

// inventoryProblems says in words what keeps a row from being under
// control, and a due review.
func inventoryProblems(r inventory.Row) []string {
	out := []string{}
	for _, col := range r.Missing {
		switch col {
		case inventory.ColOwner:
			out = append(out, "no owner: nobody is named who answers for this account")
		case inventory.ColBackup:
			out = append(out, "no backup revoker: nobody else is named who may revoke it")
		case inventory.ColAccount:
			out = append(out, "the provider did not say which account was connected")
		case inventory.ColReviewBy:
			out = append(out, "no expiry review date")
		default:
			out = append(out, "no "+col)
		}
	}
	if r.ReviewDue {
		out = append(out, "its expiry review date has passed")
	}
	return out
}

// updateOwners writes the owner, backup revoker and review date through
// the inventory, each changed field one audited edit.
func (s *OAuthService) updateOwners(id string, form InventoryForm, reviewBy time.Time) error {
	inv := s.owners()
	if inv == nil {
		return errNoInventory
	}
	ctx, cancel := context.WithTimeout(context.Background(), inventoryTimeout)
	defer cancel()
	cur, err := inv.Row(ctx, id)
	if errors.Is(err, inventory.ErrNotFound) {
		return shown("There is no such authorization.")
	}
	if err != nil {
		return s.inventory.publicError("read the inventory", err)
	}
	day := ""
	if !reviewBy.IsZero() {
		day = reviewBy.Format(inventory.DateLayout)
	}
	curDay := ""
	if !cur.ReviewBy.IsZero() {
		curDay = cur.ReviewBy.Format(inventory.DateLayout)
	}
	for _, f := range []struct{ field, cur, next string }{
		{inventory.FieldOwner, cur.Owner, form.Owner},
		{inventory.FieldBackupRevoker, cur.BackupRevoker, form.BackupRevoker},
		{inventory.FieldReviewBy, curDay, day},
	} {
		if strings.TrimSpace(f.next) == f.cur {
			continue
		}
		if err := inv.SetField(ctx, id, f.field, f.next); err != nil {
			return s.inventory.publicError("edit the inventory", err)
		}
	}
	return nil
}
