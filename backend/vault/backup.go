package vault

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// A backup is a consistent copy of the vault file (VACUUM INTO, so what is
// still in the WAL is included), with the keyring wrap removed (a keyring
// item belongs to one computer) and the unlock throttle reset. Everything in
// it is what the vault file holds: sealed records, a manifest, and the data
// key wrapped by the passphrase in force when it was made. It opens with
// that passphrase and nothing else; no secret is ever written out in the
// clear.

// ErrNotABackup: the file chosen to restore is not a Yett vault (or holds an
// empty one).
var ErrNotABackup = errors.New("vault: this file is not a Yett backup")

// ExportBackup writes a backup to dest (replacing a file there: the save
// dialog asked). It asks for the passphrase, which is the only thing that
// will open the backup: a wrong one counts as a failed unlock. The file is
// written next to dest under a temporary name, made 0600, fsynced and
// renamed into place, so dest is either the old file or the whole backup.
// Then its time and dest are sealed in the settings record
// (Reminders().Backup), which the backup reminder counts from. Unlocked
// only. The passphrase is zeroed.
//
// Errors: ErrLocked, ErrWrongPassphrase, *ThrottledError.
func (v *Vault) ExportBackup(passphrase Passphrase, dest string) error {
	defer clear(passphrase)
	if err := v.backups().checkPassphrase(passphrase); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.yett-tmp-%x", dest, randomBytes(4))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("vault: writing the backup: %w", err)
	}
	f.Close()
	defer os.Remove(tmp)

	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	err = v.db.Exec(`VACUUM INTO ?`, tmp).Error
	v.mu.Unlock()
	if err != nil {
		return fmt.Errorf("vault: writing the backup: %w", err)
	}
	if err := scrubBackup(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("vault: writing the backup: %w", err)
	}
	if err := store.SyncDir(filepath.Dir(dest)); err != nil {
		return err
	}
	// The backup is made; when it was made is recorded after it, so the
	// backup itself names the one before it.
	v.mu.Lock()
	err = v.usable()
	if err == nil {
		err = v.recordBackupLocked(dest, v.opts.Now())
	}
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "backup exported", Change: ChangeBackupExported})
	v.mu.Unlock()
	v.session().deliver()
	if err != nil {
		return fmt.Errorf("%w (the backup was saved, but not when: the backup reminder does not know of it)", err)
	}
	return nil
}

// checkPassphrase verifies passphrase against the header while unlocked,
// with the unlock throttle: a wrong one is a guess like any other.
func (v *backups) checkPassphrase(passphrase Passphrase) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	if _, err := v.session().throttled(); err != nil {
		v.mu.Unlock()
		return err
	}
	if err := v.refreshHeader(); err != nil {
		v.mu.Unlock()
		return err
	}
	h := v.hdr
	v.mu.Unlock()
	kek := passphraseKey(passphrase, h.Salt, h.KDF)
	dataKey, err := unwrapKey(kek, h.Wrapped, passphraseWrapAD(h))
	clear(kek)
	clear(dataKey)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		_, ferr := recordFailure(v.db, v.opts.Now())
		return errors.Join(ErrWrongPassphrase, ferr)
	}
	return resetThrottle(v.db)
}

// scrubBackup removes what must not travel with a backup and makes it one
// self-contained file (no WAL beside it), then fsyncs it.
func scrubBackup(path string) error {
	db, err := store.Open(path, schema)
	if err != nil {
		return fmt.Errorf("vault: writing the backup: %w", err)
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`UPDATE vault_meta SET keyring_wrap = NULL`).Error; err != nil {
			return err
		}
		return resetThrottle(tx)
	})
	if err == nil {
		err = db.Exec(`PRAGMA journal_mode = DELETE`).Error
	}
	if cerr := store.Close(db); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vault: writing the backup: %w", err)
	}
	return store.SyncFile(path)
}

// RestoreBackup replaces the vault's contents with the backup at src and
// unlocks it with passphrase, the one the backup was made with. The backup
// is first copied into the vault's directory and unlocked there, which
// verifies every record against its manifest: a wrong passphrase or a
// damaged or foreign file changes nothing. Then the vault locks (if it was
// unlocked: agents' approvals end), the current file is set aside as
// yett.db.before-restore-<unix> (never deleted; an uninitialised one, which
// holds only counters, is removed), the copy takes its place, the epoch
// continues above every value this process or either file knew, and the
// vault is unlocked with the backup's contents. Keyring unlock is off after
// a restore. Works in any state but closed: it is also the way out of a
// damaged vault and the way to set up on a new computer. Announces
// "restored", then "unlocked".
//
// Like Reset, it assumes no other process has this vault file open.
//
// Errors: ErrNotABackup, ErrWrongPassphrase, ErrDamaged (the backup is
// damaged; nothing changed), ErrClosed.
func (v *Vault) RestoreBackup(src string, passphrase Passphrase) error {
	defer clear(passphrase)
	again := append(Passphrase(nil), passphrase...)
	defer clear(again)

	staging, err := v.backups().stageBackup(src, passphrase)
	if staging != "" {
		defer os.RemoveAll(staging)
	}
	if err != nil {
		return err
	}
	if err := v.backups().swapIn(filepath.Join(staging, FileName)); err != nil {
		return err
	}
	return v.Unlock(again)
}

// stageBackup copies src into a new directory beside the vault and unlocks
// the copy there with passphrase (zeroed), verifying it. It returns the
// directory, which the caller removes.
func (v *backups) stageBackup(src string, passphrase Passphrase) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(v.path), FileName+".restoring-")
	if err != nil {
		return "", fmt.Errorf("vault: restoring: %w", err)
	}
	if err := copyFile(src, filepath.Join(dir, FileName)); err != nil {
		return dir, err
	}
	o := v.opts
	o.Keyring, o.AfterFunc = nil, func(time.Duration, func()) func() bool { return func() bool { return false } }
	staged, err := Open(dir, o)
	if err != nil {
		return dir, fmt.Errorf("%w: %v", ErrNotABackup, err)
	}
	defer staged.Close()
	switch s := staged.Status(); s.State {
	case StateLocked:
	case StateDamaged:
		clear(passphrase)
		if errors.Is(staged.damaged, ErrDamaged) && staged.damaged.Where == "file" {
			return dir, ErrNotABackup
		}
		return dir, fmt.Errorf("vault: the backup is damaged: %s: %s", staged.damaged.Where, staged.damaged.Reason)
	default:
		clear(passphrase)
		return dir, ErrNotABackup
	}
	if err := staged.Unlock(passphrase); err != nil {
		if errors.Is(err, ErrWrongPassphrase) {
			return dir, ErrWrongPassphrase
		}
		return dir, err
	}
	return dir, nil
}

// swapIn sets the current file aside and moves the staged one into place,
// with the epoch above every earlier value. unlockMu keeps unlocks out
// meanwhile.
func (v *backups) swapIn(staged string) error {
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	defer v.session().deliver()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	if v.state == StateUnlocked {
		// The lock's own error (an epoch the disk refused) does not stop the
		// restore: the file it concerns is being set aside.
		_ = v.session().lockLocked("backup restored")
	}
	was := v.state
	prior := v.epoch
	if v.db != nil {
		if stored, err := readEpoch(v.db); err == nil {
			prior = max(prior, stored)
		}
	}
	v.closeRecordStmt()
	if v.db != nil {
		store.Close(v.db)
		v.db = nil
	}
	aside := fmt.Sprintf("%s.before-restore-%d", v.path, v.opts.Now().Unix())
	for _, suffix := range []string{"", "-wal", "-shm"} {
		var err error
		if was == StateUninitialised {
			err = os.Remove(v.path + suffix)
		} else {
			err = os.Rename(v.path+suffix, aside+suffix)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return v.reopenAfterFailedSwap(fmt.Errorf("vault: setting the current vault aside: %w", err))
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(staged+suffix, v.path+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return v.reopenAfterFailedSwap(fmt.Errorf("vault: moving the backup into place: %w", err))
		}
	}
	if err := store.SyncDir(filepath.Dir(v.path)); err != nil {
		return v.reopenAfterFailedSwap(err)
	}
	db, err := store.Open(v.path, schema)
	if err != nil {
		return v.reopenAfterFailedSwap(fmt.Errorf("vault: opening the restored vault: %w", err))
	}
	v.db = db
	v.state, v.damaged, v.hdr, v.keyringWrap, v.auditRecipient = StateUninitialised, nil, nil, nil, ""
	if err := v.load(); err != nil {
		v.session().failHeader(err)
		return err
	}
	v.epoch = max(v.epoch, prior)
	v.autoLock = v.opts.AutoLockAfter
	if _, err := v.session().advanceEpoch(func(tx *gorm.DB, _ uint64) error {
		if err := tx.Exec(`UPDATE vault_meta SET keyring_wrap = NULL`).Error; err != nil {
			return err
		}
		return resetThrottle(tx)
	}); err != nil {
		return err
	}
	v.keyringWrap = nil
	reason := "restored from a backup"
	if was != StateUninitialised {
		reason += "; the previous file was kept as " + filepath.Base(aside)
	}
	v.session().enqueue(Event{Kind: EventRestored, Epoch: v.epoch, Reason: reason, Change: ChangeBackupRestored})
	return nil
}

// reopenAfterFailedSwap opens whatever is at the vault's path after a
// failed swap, so the vault reports the state of the file it has. v.mu
// held.
func (v *backups) reopenAfterFailedSwap(cause error) error {
	db, err := store.Open(v.path, schema)
	if err != nil {
		v.state, v.damaged = StateDamaged, &DamagedError{Where: "file", Reason: "the restore failed and the vault file could not be opened again: " + err.Error()}
		return cause
	}
	v.db = db
	v.hdr, v.keyringWrap, v.auditRecipient = nil, nil, ""
	v.state = StateUninitialised
	if err := v.load(); err != nil {
		v.session().failHeader(err)
	}
	return cause
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("vault: reading the backup: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("vault: restoring: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("vault: reading the backup: %w", err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("vault: restoring: %w", err)
	}
	return out.Close()
}
