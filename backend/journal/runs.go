package journal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

type bootRow struct {
	BootID          string
	PreviousBootID  string
	StartedUnixNano int64
}

func (bootRow) TableName() string { return "journal_boots" }

// StartBoot records a new gateway boot and returns the boot before it ("" on
// the first start). The boot id itself is never an authority: it is kept so
// that evidence of earlier runs can be told apart from this boot's.
func (j *Journal) StartBoot(ctx context.Context, bootID string) (previous string, err error) {
	err = j.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var last bootRow
		e := tx.Order("started_unix_nano DESC").Take(&last).Error
		if e != nil && !errors.Is(e, gorm.ErrRecordNotFound) {
			return e
		}
		previous = last.BootID
		return tx.Create(&bootRow{BootID: bootID, PreviousBootID: previous, StartedUnixNano: time.Now().UnixNano()}).Error
	})
	if err != nil {
		return "", fmt.Errorf("journal: boot: %w", err)
	}
	return previous, nil
}

// Run is an approved run, recorded as evidence (never as an approval).
type Run struct {
	BootID    string
	RunID     string
	PID       int
	StartKey  uint64
	ExeSHA256 string
}

type runRow struct {
	BootID           string
	RunID            string
	Pid              int
	StartKey         int64
	ExeSha256        string
	ApprovedUnixNano int64
}

func (runRow) TableName() string { return "journal_runs" }

// RecordRun records that a run was approved in a boot. Approving the same
// run again (after a vault lock, a revoke) adds nothing new.
func (j *Journal) RecordRun(ctx context.Context, r Run) error {
	err := j.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&runRow{
		BootID: r.BootID, RunID: r.RunID, Pid: r.PID, StartKey: int64(r.StartKey),
		ExeSha256: r.ExeSHA256, ApprovedUnixNano: time.Now().UnixNano(),
	}).Error
	if err != nil {
		return fmt.Errorf("journal: run: %w", err)
	}
	return nil
}

// Evidence is what the journal knows about a process from boots other than
// the current one.
type Evidence struct {
	// SameProcessEarlierBoot: this very process (pid and kernel start
	// stamp) was approved under another gateway boot.
	SameProcessEarlierBoot bool
	// SameExecutableApproved: another process running this executable was
	// approved under another gateway boot. (Within the current boot the
	// gateway knows better: whether that other run has ended.)
	SameExecutableApproved bool
}

// EvidenceFor looks up earlier approved runs of a process.
func (j *Journal) EvidenceFor(ctx context.Context, currentBoot string, pid int, startKey uint64, exeSHA256 string) (Evidence, error) {
	var ev Evidence
	var n int64
	db := j.db.WithContext(ctx)
	if err := db.Model(&runRow{}).Where("pid = ? AND start_key = ? AND boot_id <> ?", pid, int64(startKey), currentBoot).Count(&n).Error; err != nil {
		return ev, fmt.Errorf("journal: evidence: %w", err)
	}
	ev.SameProcessEarlierBoot = n > 0
	if err := db.Model(&runRow{}).Where("exe_sha256 = ? AND boot_id <> ? AND NOT (pid = ? AND start_key = ?)", exeSHA256, currentBoot, pid, int64(startKey)).Count(&n).Error; err != nil {
		return ev, fmt.Errorf("journal: evidence: %w", err)
	}
	ev.SameExecutableApproved = n > 0
	return ev, nil
}
