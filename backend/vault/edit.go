package vault

import (
	"fmt"
	"sort"
)

// CredentialEdit is what a person may change of a stored credential:
// everything but its secret (Credentials.Rotate replaces that) and its id.
type CredentialEdit struct {
	Name         string
	Injection    Injection
	Hosts        []string
	PathPrefixes []string // empty means "/"
	Approval     Approval
	// RotateEveryDays is the rotation reminder, 0 for none; an edit
	// that changes only this is announced as ChangeRotationReminder.
	RotateEveryDays int
}

// Credentials.Update changes a credential's name, bindings, injection and
// approval mode, keeping its secret. The record is sealed again at the next
// version, so a call that chose the credential before the edit and had not
// read its secret yet is refused (Credentials.SecretOf: ErrCredentialChanged): the
// person approved what the credential was. An edit that changes nothing
// writes nothing and returns the current view.
//
// expectVersion is the version the person's form was made from; another
// change in between (a rotation, an edit from another front end) makes the
// edit fail with ErrCredentialChanged rather than undo it.
//
// Errors: ErrLocked, ErrNotFound, ErrCredentialChanged, ErrInvalid.
func (v *Credentials) Update(id string, expectVersion uint64, e CredentialEdit) (CredentialView, error) {
	return v.Credentials().rewrite(id, expectVersion, ChangeCredentialEdited, func(cur *NewCredential) error {
		cur.Name, cur.Injection, cur.Approval = e.Name, e.Injection, e.Approval
		cur.Hosts, cur.PathPrefixes, cur.RotateEveryDays = e.Hosts, e.PathPrefixes, e.RotateEveryDays
		return nil
	})
}

// Credentials.Rotate replaces a credential's secret with secret (copied; the
// caller wipes its own) and seals the record at the next version. What it
// means for calls:
//
//   - Every Credentials.SecretOf that starts after Credentials.Rotate returns opens the new
//     record: the version and the ciphertext Credentials.SecretOf reads are replaced in
//     the same critical section that commits the new record, so the old
//     secret is never read again once the rotation is durable.
//   - A call that chose the credential earlier and had not read the secret
//     yet (waiting on an approval card, or between its checks and its
//     dispatch) is refused with "credential changed" and nothing is sent;
//     the agent's retry uses the new secret. Session approvals are not ended
//     by a rotation.
//   - A call that had already read the secret is in flight with the old one
//     and finishes with it: bytes already sent cannot be recalled. Revoke
//     the old secret at the provider once such calls are done.
//
// A secret equal to the current one is refused (nothing would rotate).
//
// Errors: ErrLocked, ErrNotFound, ErrCredentialChanged (expectVersion is
// not the current version), ErrInvalid.
func (v *Credentials) Rotate(id string, expectVersion uint64, secret Secret) (CredentialView, error) {
	return v.Credentials().rewrite(id, expectVersion, ChangeSecretRotated, func(cur *NewCredential) error {
		if cur.Secret.Equal(secret) {
			return fmt.Errorf("%w: the new secret is the same as the current one", ErrInvalid)
		}
		cur.Secret.Wipe()
		cur.Secret = NewSecret(secret.b)
		return nil
	})
}

// rewrite opens credential id as this process holds it, lets
// change edit it, validates the result and seals it at the next version
// with the manifest that lists it, in one transaction. v.mu is held from
// the version check to the cache update, so no Credentials.SecretOf sees a state in
// between.
func (v *Credentials) rewrite(id string, expectVersion uint64, kind Change, change func(cur *NewCredential) error) (CredentialView, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	c, ok := v.creds[id]
	ref, okRef := v.refs[id]
	if !ok || !okRef {
		v.mu.Unlock()
		return CredentialView{}, ErrNotFound
	}
	if c.view.Version != expectVersion || ref.Version != expectVersion {
		v.mu.Unlock()
		return CredentialView{}, ErrCredentialChanged
	}
	pt, err := openRecord(v.keys, v.hdr.VaultID, ref, c.sealed)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, fmt.Errorf("vault: the credential's record does not open: %w", err)
	}
	old, secret, err := decodeCredential(ref.ID, ref.Version, pt)
	clear(pt)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, fmt.Errorf("vault: the credential's record does not decode: %w", err)
	}
	cur := NewCredential{Name: old.Name, Secret: secret, Injection: old.Injection, Hosts: old.Hosts,
		PathPrefixes: old.PathPrefixes, Approval: old.Approval, RotateEveryDays: old.RotateEveryDays}
	defer func() { cur.Secret.Wipe() }()
	if err := change(&cur); err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	next, err := cur.validate()
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	if kind == ChangeCredentialEdited && sameCredential(old, next) {
		if old.RotateEveryDays == next.RotateEveryDays {
			v.mu.Unlock()
			return old, nil
		}
		kind = ChangeRotationReminder
	}
	now := v.opts.Now().UTC()
	at := credentialTimes{created: old.CreatedAt, updated: now, secretSet: old.SecretSetAt}
	if kind == ChangeSecretRotated {
		at.secretSet = now
	}
	newRef := recordRef{ID: id, Kind: kindCredential, Version: ref.Version + 1}
	plain := encodeCredential(next, at)
	sealed, err := v.putRecord(newRef, plain)
	clear(plain)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	view := CredentialView{
		ID: id, Name: next.Name, Injection: next.Injection, Hosts: next.Hosts, PathPrefixes: next.PathPrefixes,
		Approval: next.Approval, CreatedAt: old.CreatedAt, UpdatedAt: at.updated, SecretSetAt: at.secretSet,
		Version: newRef.Version, RotateEveryDays: next.RotateEveryDays,
		RotationDueAt: rotationDueAt(at.secretSet, next.RotateEveryDays),
	}
	cached := newCachedCredential(view)
	cached.sealed = sealed
	v.creds[id] = cached
	reason := map[Change]string{ChangeSecretRotated: "credential secret rotated", ChangeCredentialEdited: "credential edited",
		ChangeRotationReminder: "rotation reminder changed"}[kind]
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: reason, Change: kind,
		Credential: &CredentialRef{ID: id, Name: view.Name, Version: view.Version}})
	v.mu.Unlock()
	v.session().deliver()
	return view, nil
}

// sameCredential: an edit that leaves every field that decides where and
// how the secret goes as it was (after normalisation) changes none of
// that; the rotation reminder is compared apart.
func sameCredential(old CredentialView, next NewCredential) bool {
	return old.Name == next.Name && old.Injection == next.Injection && old.Approval == next.Approval &&
		sameSet(old.Hosts, next.Hosts) && sameSet(old.PathPrefixes, next.PathPrefixes)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}
