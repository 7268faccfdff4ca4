package main

import (
	"fmt"
	"io"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/keeper"
)

// followInventory prints, on serve's terminal, the inventory's reminders
// (a review due, a full drill due, a failed drill) and each drill's
// verdict: the scheduled unattended drills run in serve as in the app.
func followInventory(k *keeper.Keeper, w io.Writer) (cancel func()) {
	a := k.SubscribeReminders(func(r inventory.Reminder) {
		fmt.Fprintf(w, "yett serve: %s. %s\n", r.Title, r.Body)
	})
	b := func() {}
	if inv := k.State().Inventory; inv != nil {
		b = inv.Subscribe(func(c inventory.Change) {
			if d := c.Drill; d != nil && !d.Running {
				fmt.Fprintf(w, "yett serve: %s drill of %s (%s) %s; it is %s now. %s\n", d.Kind, d.Name, d.AuthorizationID,
					map[bool]string{true: "passed", false: "failed"}[d.Passed], d.EndState, d.Advice)
			}
		})
	}
	return func() { a(); b() }
}
