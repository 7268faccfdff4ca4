//go:build unix

package main

import (
	"fmt"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// checkRotateEvery refuses a rotation reminder out of range before the
// passphrase is asked; the vault checks it again.
func checkRotateEvery(days int) error {
	if days < 0 || days > vault.MaxRotateEveryDays {
		return fmt.Errorf("--rotate-every is 1 to %d days, or 0 for no reminder", vault.MaxRotateEveryDays)
	}
	return nil
}

// rotationWords says what a credential's rotation reminder asks, as the
// app's row does: "every 90 days, due 2026-06-01 (in 12 days)", "every 90
// days, due since 2026-06-01: rotate it (yett credential rotate)".
func rotationWords(c vault.CredentialView, now time.Time) string {
	if c.RotateEveryDays == 0 {
		return "no reminder (yett credential edit NAME --rotate-every DAYS sets one)"
	}
	every := fmt.Sprintf("every %d days", c.RotateEveryDays)
	if c.RotateEveryDays == 1 {
		every = "every day"
	}
	due := c.RotationDueAt.Local().Format(time.DateOnly)
	if !now.Before(c.RotationDueAt) {
		return fmt.Sprintf("%s, due since %s: rotate it (yett credential rotate)", every, due)
	}
	return fmt.Sprintf("%s, due %s (%s)", every, due, inWords(c.RotationDueAt, now))
}

// inWords says how many calendar days ahead, in local time, t is from
// now: "today", "tomorrow", "in 12 days".
func inWords(t, now time.Time) string {
	day := func(x time.Time) time.Time {
		y, m, d := x.Local().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	switch days := int(day(t).Sub(day(now)).Hours() / 24); {
	case days < 1:
		return "today"
	case days == 1:
		return "tomorrow"
	default:
		return fmt.Sprintf("in %d days", days)
	}
}
