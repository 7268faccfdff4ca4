package vault

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// A removal takes effect at once: the record leaves the file and the
// manifest in one transaction, and from that moment For finds nothing and
// SecretOf refuses the version a waiting call chose. For UndoWindow the
// record's ciphertext, as it was in the file, stays in this process's
// memory, and Restore can bring the credential back from it. It is never
// plaintext and never written anywhere; a lock, a damaged record, Close,
// a restored backup or a reset forgets it (the keys it needs go with the
// session), and a process that exits takes it along: the removal then
// stands.

// UndoWindow is how long after Remove a credential can be restored.
const UndoWindow = 30 * time.Second

// ErrUndoExpired: there is no removal of that credential left to undo in
// this process (the window passed, the vault locked since, or it was never
// removed here).
var ErrUndoExpired = errors.New("vault: too late to undo that removal: it stands")

// RemovedCredential names a removal Restore can still undo.
type RemovedCredential struct {
	ID        string
	Name      string
	Version   uint64 // the version it was removed at
	UndoUntil time.Time
}

// removedCredential is a removed record kept sealed for Restore.
type removedCredential struct {
	ref    recordRef
	sealed []byte
	name   string
	until  time.Time
}

// keepRemoved holds the record removed at ref for UndoWindow. v.mu held.
func (v *Vault) keepRemoved(ref recordRef, c cachedCredential) {
	now := v.opts.Now()
	v.pruneRemoved(now)
	if v.removed == nil {
		v.removed = map[string]removedCredential{}
	}
	v.removed[ref.ID] = removedCredential{ref: ref, sealed: c.sealed, name: c.view.Name, until: now.Add(UndoWindow)}
}

// pruneRemoved forgets removals whose window has passed. v.mu held.
func (v *Vault) pruneRemoved(now time.Time) {
	for id, r := range v.removed {
		if !now.Before(r.until) {
			delete(v.removed, id)
		}
	}
}

// Removed lists the removals Restore can still undo, the newest first.
// Errors: ErrLocked.
func (v *Credentials) Removed() ([]RemovedCredential, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	v.pruneRemoved(v.opts.Now())
	out := make([]RemovedCredential, 0, len(v.removed))
	for id, r := range v.removed {
		out = append(out, RemovedCredential{ID: id, Name: r.name, Version: r.ref.Version, UndoUntil: r.until})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UndoUntil.After(out[j].UndoUntil) })
	return out, nil
}

// Restore undoes the removal of credential id, within UndoWindow of it:
// the credential comes back as it was (id, name, bindings, injection,
// approval, rotation reminder, secret and times) at the version after the
// one it was removed at. The new version is what keeps the undo from
// reviving a call: a call that chose the credential before the removal
// and waited on its card stays refused (SecretOf: ErrCredentialChanged),
// and the agent asks again. Session approvals are not touched by either.
// It is announced as ChangeCredentialRestored.
//
// Restore is the window's action, as Add is: no agent-facing path calls
// it, and a CLI process that removed a credential has exited before
// anyone could undo.
//
// Errors: ErrLocked, ErrUndoExpired.
func (v *Credentials) Restore(id string) (CredentialView, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	v.pruneRemoved(v.opts.Now())
	r, ok := v.removed[id]
	if _, back := v.refs[id]; !ok || back {
		v.mu.Unlock()
		return CredentialView{}, ErrUndoExpired
	}
	pt, err := openRecord(v.keys, v.hdr.VaultID, r.ref, r.sealed)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, fmt.Errorf("vault: the removed credential's record does not open: %w", err)
	}
	newRef := recordRef{ID: id, Kind: kindCredential, Version: r.ref.Version + 1}
	view, secret, err := decodeCredential(id, newRef.Version, pt)
	secret.Wipe()
	if err != nil {
		clear(pt)
		v.mu.Unlock()
		return CredentialView{}, fmt.Errorf("vault: the removed credential's record does not decode: %w", err)
	}
	// The same plaintext, sealed again under the new version: nothing in
	// it changes, not even UpdatedAt.
	sealed, err := v.putRecord(newRef, pt)
	clear(pt)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	delete(v.removed, id)
	cached := newCachedCredential(view)
	cached.sealed = sealed
	v.creds[id] = cached
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "credential restored", Change: ChangeCredentialRestored,
		Credential: &CredentialRef{ID: id, Name: view.Name, Version: view.Version}})
	v.mu.Unlock()
	v.session().deliver()
	return view, nil
}
