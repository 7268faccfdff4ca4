package vault

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

func readEpoch(db *gorm.DB) (uint64, error) {
	var e int64
	if err := db.Raw(`SELECT value FROM vault_epoch WHERE id = 1`).Scan(&e).Error; err != nil {
		return 0, fmt.Errorf("vault: reading epoch: %w", err)
	}
	return uint64(e), nil
}

// advanceEpoch commits epoch+1, together with whatever also must change
// atomically with it (a new manifest, the throttle reset, a new vault), and
// only then updates v.epoch. The next value is above both the stored and
// the in-memory epoch, so a file swapped under a running vault cannot make
// the number go back. v.mu held.
func (v *session) advanceEpoch(also func(tx *gorm.DB, next uint64) error) (uint64, error) {
	if v.db == nil {
		return 0, fmt.Errorf("vault: committing epoch: the database is not open")
	}
	var next uint64
	err := v.db.Transaction(func(tx *gorm.DB) error {
		stored, err := readEpoch(tx)
		if err != nil {
			return err
		}
		next = max(stored, v.epoch) + 1
		if err := tx.Exec(`UPDATE vault_epoch SET value = ? WHERE id = 1`, int64(next)).Error; err != nil {
			return err
		}
		if also != nil {
			return also(tx, next)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("vault: committing epoch: %w", err)
	}
	v.epoch = next
	return next, nil
}

// moveEpoch advances the epoch for a change that happens whatever the disk
// says: a lock, a lost session. It commits epoch+1 (with also) when it can.
// When the commit fails the epoch still moves, in memory, so that nothing
// bound to the old epoch survives in this process; the failure is
// returned wrapping ErrEpochNotSaved, and saved is false so the caller's
// event says so. After a crash the stored epoch may then be lower than one
// this process announced; approvals never outlive the process (they are
// bound to its boot id too), so a number used again cannot revive one.
// v.mu held.
func (v *session) moveEpoch(also func(tx *gorm.DB, next uint64) error) (saved bool, err error) {
	if _, err := v.advanceEpoch(also); err != nil {
		v.epoch++
		return false, fmt.Errorf("%w: %w", ErrEpochNotSaved, err)
	}
	return true, nil
}

// throttle is the persisted count of consecutive wrong passphrases.
type throttle struct {
	Failures    int
	LastFailure time.Time
}

// freeAttempts wrong passphrases cost nothing; each further one doubles
// the wait, up to 1024 x base.
const freeAttempts = 3

func (t throttle) delay(base time.Duration) time.Duration {
	if t.Failures < freeAttempts {
		return 0
	}
	return base << min(t.Failures-freeAttempts, 10)
}

// retryAfter is how long until the next attempt is allowed. A clock that
// went backwards cannot stretch the wait beyond one full delay.
func (t throttle) retryAfter(base time.Duration, now time.Time) time.Duration {
	d := t.delay(base)
	if d == 0 {
		return 0
	}
	left := t.LastFailure.Add(d).Sub(now)
	return min(max(left, 0), d)
}

// throttled reads the wrong-passphrase throttle and refuses, with how long
// to wait, while it holds; every passphrase check goes through it. The
// caller holds v.mu.
func (v *session) throttled() (throttle, error) {
	t, err := readThrottle(v.db)
	if err != nil {
		return t, err
	}
	if wait := t.retryAfter(v.opts.ThrottleBase, v.opts.Now()); wait > 0 {
		return t, &ThrottledError{RetryAfter: wait, Failures: t.Failures}
	}
	return t, nil
}

func readThrottle(db *gorm.DB) (throttle, error) {
	var row struct {
		Failures            int
		LastFailureUnixNano int64
	}
	if err := db.Raw(`SELECT failures, last_failure_unix_nano FROM unlock_throttle WHERE id = 1`).Scan(&row).Error; err != nil {
		return throttle{}, fmt.Errorf("vault: reading unlock throttle: %w", err)
	}
	return throttle{Failures: row.Failures, LastFailure: time.Unix(0, row.LastFailureUnixNano)}, nil
}

func recordFailure(db *gorm.DB, now time.Time) (throttle, error) {
	err := db.Exec(`UPDATE unlock_throttle SET failures = failures + 1, last_failure_unix_nano = ? WHERE id = 1`, now.UnixNano()).Error
	if err != nil {
		return throttle{}, fmt.Errorf("vault: recording failed unlock: %w", err)
	}
	return readThrottle(db)
}

func resetThrottle(tx *gorm.DB) error {
	return tx.Exec(`UPDATE unlock_throttle SET failures = 0, last_failure_unix_nano = 0 WHERE id = 1`).Error
}
