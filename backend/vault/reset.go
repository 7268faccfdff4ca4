package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yettdev/yett/backend/store"
)

// Reset sets the vault aside and starts over: the database and its -wal
// and -shm are renamed (never deleted) to yett.db.reset-<unix>..., a new
// uninitialised database is created, and the epoch continues above every
// value this process or the old file knew (or, if the old file is
// unreadable, from the current Unix time in seconds). It works in any state, which is
// how a person leaves a damaged vault; the caller must have them confirm,
// because every credential in the old file becomes unreachable from the
// app. Announces "reset". The old vault's keyring item, if any, is left in
// the keyring (it opens nothing without the old file).
func (v *Vault) Reset() error {
	v.unlockMu.Lock()
	defer v.unlockMu.Unlock()
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return ErrClosed
	}
	epoch := v.epoch
	stored, err := uint64(0), errors.New("no database")
	if v.db != nil {
		stored, err = readEpoch(v.db)
	}
	if err == nil {
		epoch = max(epoch, stored)
	} else {
		// The old epoch is unreadable. Continue from the Unix time in
		// seconds: a vault advances its epoch a few times a day, so no
		// earlier vault can have reached that number.
		epoch = max(epoch, uint64(v.opts.Now().Unix()))
	}
	v.session().dropSession()
	v.closeRecordStmt()
	if v.db != nil {
		store.Close(v.db)
		v.db = nil
	}
	aside := fmt.Sprintf("%s.reset-%d", v.path, v.opts.Now().Unix())
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(v.path+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			v.mu.Unlock()
			return fmt.Errorf("vault: setting the old vault aside: %w", err)
		}
	}
	db, err := store.Open(v.path, schema)
	if err != nil {
		v.mu.Unlock()
		return fmt.Errorf("vault: creating a new vault file: %w", err)
	}
	v.db = db
	v.epoch = epoch
	v.state, v.damaged, v.hdr, v.keyringWrap = StateUninitialised, nil, nil, nil
	v.auditRecipient = ""
	v.autoLock = v.opts.AutoLockAfter
	if _, err := v.session().advanceEpoch(nil); err != nil {
		v.mu.Unlock()
		return err
	}
	v.session().enqueue(Event{Kind: EventReset, Epoch: v.epoch, Reason: "vault reset; the old file was kept as " + filepath.Base(aside)})
	v.mu.Unlock()
	v.session().deliver()
	return nil
}
