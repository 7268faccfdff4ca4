package vault

// Some kinds have one record at most, under a fixed id: the team
// membership, the witness. These are their put, read and delete, each
// under v.mu, announcing what changed as every record's change is.

// putSingle seals pt as the record id of kind, one version above the one
// there is, and announces change naming it name. Errors: ErrLocked.
func (v *Vault) putSingle(id, kind string, pt []byte, change Change, name string) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	ref := recordRef{ID: id, Kind: kind, Version: 1}
	if old, ok := v.refs[id]; ok {
		ref.Version = old.Version + 1
	}
	_, err := v.putRecord(ref, pt)
	v.unlockAnnouncing(err, change, CredentialRef{ID: id, Name: name, Version: ref.Version})
	return err
}

// readSingle reads the record id from the file, authenticated now, and
// hands its plaintext to decode. Errors: ErrLocked, missing (no such
// record), ErrDamaged (it no longer authenticates: the session is lost),
// decode's.
func (v *Vault) readSingle(id string, missing error, decode func(plaintext []byte) error) error {
	ref, err := v.lockSingle(id, missing)
	if err != nil {
		return err
	}
	err = v.readRecord(ref, decode)
	v.mu.Unlock()
	if err != nil {
		v.session().deliver()
	}
	return err
}

// deleteSingle deletes the record id and announces change naming it name
// (name may read it from the plaintext first, or be given). Errors:
// ErrLocked, missing.
func (v *Vault) deleteSingle(id string, missing error, change Change, name func(ref recordRef) string) error {
	ref, err := v.lockSingle(id, missing)
	if err != nil {
		return err
	}
	n := name(ref)
	err = v.deleteRecord(id)
	v.unlockAnnouncing(err, change, CredentialRef{ID: id, Name: n, Version: ref.Version})
	return err
}

// lockSingle takes v.mu and finds the record id, or releases v.mu and
// returns ErrLocked (or the vault's other state) or missing.
func (v *Vault) lockSingle(id string, missing error) (recordRef, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return recordRef{}, err
	}
	ref, ok := v.refs[id]
	if !ok {
		v.mu.Unlock()
		return recordRef{}, missing
	}
	return ref, nil
}
