package vault

import (
	"bytes"
	"crypto/hmac"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/target"
)

const (
	kindCredential = "credential"
	kindSettings   = "settings"
	settingsID     = "settings"
)

type recordRow struct {
	ID      string
	Kind    string
	Version int64
	Sealed  []byte
}

func (r recordRow) ref() recordRef {
	return recordRef{ID: r.ID, Kind: r.Kind, Version: uint64(r.Version)}
}

// verifyAll checks the manifest MAC and epoch, that the rows are exactly
// the manifest's records at the manifest's versions, and that every record
// authenticates and parses. Any failure is a *DamagedError naming the part.
// v.mu held.
//
// The manifest, the stored epoch and the rows are read in one transaction:
// another process on the same file (the app and `yett serve`) may unlock or
// write meanwhile, and a mix of two states would look like damage. The
// epoch compared with the manifest's is the stored one (never below the
// one this process saw): another process's unlock advances both together.
func (v *session) verifyAll(keys *sessionKeys) (got *verified, err error) {
	txErr := v.db.Transaction(func(tx *gorm.DB) error {
		got, err = v.verifyIn(tx, keys)
		return nil
	})
	if txErr != nil {
		return nil, fmt.Errorf("vault: %w", txErr)
	}
	return got, err
}

// verified is what verifyAll found, every record checked: the manifest's
// refs and each kind's metadata (no secret of any kind).
type verified struct {
	refs     map[string]recordRef
	creds    map[string]cachedCredential
	settings *settingsRecord
	hosts    map[string]cachedHost
	servers  map[string]cachedServer
}

func (v *session) verifyIn(db *gorm.DB, keys *sessionKeys) (*verified, error) {
	var raw []byte
	if err := db.Raw(`SELECT manifest FROM vault_meta WHERE id = 1`).Row().Scan(&raw); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("vault: %w", err)
	}
	stored, err := readEpoch(db)
	if err != nil {
		return nil, err
	}
	v.epoch = max(v.epoch, stored)
	if raw == nil {
		return nil, &DamagedError{Where: "manifest", Reason: "the manifest is missing"}
	}
	m, body, mac, err := decodeManifest(raw)
	if err != nil {
		return nil, &DamagedError{Where: "manifest", Reason: err.Error()}
	}
	if !hmac.Equal(mac, manifestMAC(keys, v.hdr.VaultID, body)) {
		return nil, &DamagedError{Where: "manifest", Reason: "its MAC does not verify (it was altered or comes from another vault)"}
	}
	if m.Epoch > v.epoch {
		return nil, &DamagedError{Where: "epoch", Reason: fmt.Sprintf("the stored epoch %d is behind the manifest's %d (the epoch counter was rolled back)", v.epoch, m.Epoch)}
	}
	expected := make(map[string]recordRef, len(m.Records))
	for _, r := range m.Records {
		expected[r.ID] = r
	}
	var rows []recordRow
	if err := db.Raw(`SELECT id, kind, version, sealed FROM vault_records ORDER BY id`).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	refs := make(map[string]recordRef, len(rows))
	creds := make(map[string]cachedCredential)
	hosts := make(map[string]cachedHost)
	servers := make(map[string]cachedServer)
	var settings *settingsRecord
	auditKeySeen := false
	for _, row := range rows {
		ref := row.ref()
		if err := checkAgainstManifest(ref, expected); err != nil {
			return nil, err
		}
		delete(expected, ref.ID)
		pt, err := openRecord(keys, v.hdr.VaultID, ref, row.Sealed)
		if err != nil {
			return nil, &DamagedError{Where: recordWhere(ref), Reason: "it does not authenticate (its ciphertext, id, kind or version column was altered, or it was moved from another row): " + err.Error()}
		}
		switch ref.Kind {
		case kindCredential:
			view, secret, err := decodeCredential(ref.ID, ref.Version, pt)
			secret.Wipe()
			clear(pt)
			if err != nil {
				return nil, &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
			}
			c := newCachedCredential(view)
			c.sealed = row.Sealed
			creds[ref.ID] = c
		case kindSettings:
			s, err := decodeSettings(pt)
			if err != nil || ref.ID != settingsID {
				return nil, &DamagedError{Where: recordWhere(ref), Reason: fmt.Sprintf("not a valid settings record: %v", err)}
			}
			settings = &s
		case kindSSHHost:
			err := verifySSHHost(ref, row.Sealed, pt, hosts)
			clear(pt)
			if err != nil {
				return nil, err
			}
		case kindMCPServer:
			err := verifyMCPServer(ref, row.Sealed, pt, servers)
			clear(pt)
			if err != nil {
				return nil, err
			}
		case kindAuditKey:
			err := checkAuditKeyRecord(ref, pt, auditKeySeen)
			clear(pt)
			if err != nil {
				return nil, err
			}
			auditKeySeen = true
		case kindTeam:
			err := checkTeamRecord(ref, pt)
			clear(pt)
			if err != nil {
				return nil, err
			}
		case kindWitness:
			err := checkWitnessRecord(ref, pt)
			clear(pt)
			if err != nil {
				return nil, err
			}
		default:
			return nil, &DamagedError{Where: recordWhere(ref), Reason: "unknown record kind"}
		}
		refs[ref.ID] = ref
	}
	for _, missing := range sortedRefs(expected) {
		return nil, &DamagedError{Where: recordWhere(missing), Reason: "it is listed in the manifest but missing from the file"}
	}
	return &verified{refs: refs, creds: creds, settings: settings, hosts: hosts, servers: servers}, nil
}

func checkAgainstManifest(ref recordRef, expected map[string]recordRef) error {
	want, ok := expected[ref.ID]
	switch {
	case !ok:
		return &DamagedError{Where: recordWhere(ref), Reason: "it is not in the manifest (a deleted record was restored, or a row was added)"}
	case want.Kind != ref.Kind:
		return &DamagedError{Where: recordWhere(ref), Reason: fmt.Sprintf("its kind column says %q but the manifest says %q", ref.Kind, want.Kind)}
	case ref.Version < want.Version:
		return &DamagedError{Where: recordWhere(ref), Reason: fmt.Sprintf("it is at version %d but the manifest expects %d (an older copy of this record was restored)", ref.Version, want.Version)}
	case ref.Version > want.Version:
		return &DamagedError{Where: recordWhere(ref), Reason: fmt.Sprintf("it is at version %d but the manifest expects %d", ref.Version, want.Version)}
	}
	return nil
}

func sortedRefs(m map[string]recordRef) []recordRef {
	out := make([]recordRef, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// putRecord writes a sealed record and the manifest that lists it in one
// transaction: a crash leaves both old or both new. v.mu held, unlocked.
func (v *Vault) putRecord(ref recordRef, plaintext []byte) ([]byte, error) {
	sealed := sealRecord(v.keys, v.hdr.VaultID, ref, plaintext)
	refs := cloneRefs(v.refs)
	refs[ref.ID] = ref
	err := v.db.Transaction(func(tx *gorm.DB) error {
		err := tx.Exec(`INSERT INTO vault_records (id, kind, version, sealed) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, version = excluded.version, sealed = excluded.sealed`,
			ref.ID, ref.Kind, int64(ref.Version), sealed).Error
		if err != nil {
			return err
		}
		return writeManifest(tx, v.keys, v.hdr.VaultID, v.epoch, refs)
	})
	if err != nil {
		return nil, fmt.Errorf("vault: saving record: %w", err)
	}
	v.refs = refs
	return sealed, nil
}

func (v *Vault) deleteRecord(id string) error {
	refs := cloneRefs(v.refs)
	delete(refs, id)
	err := v.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`DELETE FROM vault_records WHERE id = ?`, id).Error; err != nil {
			return err
		}
		return writeManifest(tx, v.keys, v.hdr.VaultID, v.epoch, refs)
	})
	if err != nil {
		return fmt.Errorf("vault: deleting record: %w", err)
	}
	v.refs = refs
	return nil
}

func cloneRefs(m map[string]recordRef) map[string]recordRef {
	out := make(map[string]recordRef, len(m)+1)
	for k, r := range m {
		out[k] = r
	}
	return out
}

// Credentials.Add validates c, seals it as a new record and returns its view.
// Errors: ErrLocked, ErrInvalid (the message says which field, never the
// secret's value).
func (v *Credentials) Add(c NewCredential) (CredentialView, error) {
	c, err := c.validate()
	if err != nil {
		return CredentialView{}, err
	}
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	ref := recordRef{ID: "cred_" + hex.EncodeToString(randomBytes(12)), Kind: kindCredential, Version: 1}
	created := v.opts.Now().UTC()
	pt := encodeCredential(c, credentialTimes{created: created, updated: created, secretSet: created})
	sealed, err := v.putRecord(ref, pt)
	clear(pt)
	if err != nil {
		v.mu.Unlock()
		return CredentialView{}, err
	}
	view := CredentialView{
		ID: ref.ID, Name: c.Name, Injection: c.Injection, Hosts: c.Hosts,
		PathPrefixes: c.PathPrefixes, Approval: c.Approval, CreatedAt: created, Version: ref.Version,
		UpdatedAt: created, SecretSetAt: created,
		RotateEveryDays: c.RotateEveryDays, RotationDueAt: rotationDueAt(created, c.RotateEveryDays),
	}
	cached := newCachedCredential(view)
	cached.sealed = sealed
	v.creds[ref.ID] = cached
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "credential added", Change: ChangeCredentialAdded,
		Credential: &CredentialRef{ID: ref.ID, Name: view.Name, Version: ref.Version}})
	v.mu.Unlock()
	v.session().deliver()
	return view, nil
}

// List returns every credential's redacted view, by name, each with
// RotationDue as of now.
func (v *Credentials) List() ([]CredentialView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	out := make([]CredentialView, 0, len(v.creds))
	now := v.opts.Now()
	for _, c := range v.creds {
		view := c.view
		view.RotationDue = view.rotationDue(now)
		out = append(out, view)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Remove deletes a credential, at once: no call chooses it or reads its
// secret from then on. Restore can undo it for UndoWindow (undo.go).
// Errors: ErrLocked, ErrNotFound.
func (v *Credentials) Remove(id string) error {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return err
	}
	old, ok := v.creds[id]
	ref, okRef := v.refs[id]
	if !ok || !okRef {
		v.mu.Unlock()
		return ErrNotFound
	}
	if err := v.deleteRecord(id); err != nil {
		v.mu.Unlock()
		return err
	}
	delete(v.creds, id)
	v.keepRemoved(ref, old)
	v.session().enqueue(Event{Kind: EventChanged, Epoch: v.epoch, Reason: "credential removed", Change: ChangeCredentialRemoved,
		Credential: &CredentialRef{ID: id, Name: old.view.Name, Version: old.view.Version}})
	v.mu.Unlock()
	v.session().deliver()
	return nil
}

// Credentials.For picks the credential bound most specifically to a request
// for the target t. Exact hosts beat wildcards, then an explicit port, then
// the longest path prefix. t comes from target.Parse, the one reader of
// request URLs, so the executor sends to exactly what matched. It reads
// nothing from the file: the choice is made on the metadata decrypted at
// unlock. Credentials.SecretOf reads the secret, once, when the call is about to leave.
//
// Errors: ErrLocked, ErrNoCredential, ErrAmbiguousCredential (two equally
// specific bindings: the person must narrow one).
func (v *Credentials) For(t target.URL) (CredentialView, error) {
	reqHost, reqPort, path := bindingHost(t), t.Port, t.Path
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return CredentialView{}, err
	}
	return pickCredential(v.creds, reqHost, reqPort, path)
}

// Credentials.SecretOf returns the secret of credential id at exactly version. It opens
// the record's ciphertext as verified against the manifest at unlock (or as
// this process wrote it since): nothing is read from the file, so a record
// rolled back or swapped on disk while the vault is open has no effect, and
// a call costs one authenticated decryption. A credential removed or edited
// since the caller chose it is ErrCredentialChanged: the caller's approval
// was for the version it saw.
//
// Errors: ErrLocked, ErrCredentialChanged, ErrDamaged (the record failed
// authentication; the session is lost and the vault is damaged).
func (v *Credentials) SecretOf(id string, version uint64) (*Secret, error) {
	v.mu.Lock()
	if err := v.usable(); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	c, ok := v.creds[id]
	ref, okRef := v.refs[id]
	if !ok || !okRef || c.view.Version != version || ref.Version != version {
		v.mu.Unlock()
		return nil, ErrCredentialChanged
	}
	pt, err := openRecord(v.keys, v.hdr.VaultID, ref, c.sealed)
	if err != nil {
		// Memory, not the file: this cannot be an edit on disk.
		v.mu.Unlock()
		return nil, fmt.Errorf("vault: the credential's record does not open: %w", err)
	}
	secret, err := decodeSecret(pt)
	clear(pt)
	v.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("vault: the credential's record does not decode: %w", err)
	}
	return &secret, nil
}

// cachedCredential is a credential's view with its host bindings parsed
// once, so choosing a credential per request parses nothing.
type cachedCredential struct {
	view  CredentialView
	hosts []HostPattern
	// sealed is the record's ciphertext, as verified at unlock or written
	// since (Credentials.SecretOf). It holds no plaintext.
	sealed []byte
}

func newCachedCredential(view CredentialView) cachedCredential {
	c := cachedCredential{view: view}
	for _, h := range view.Hosts {
		// Hosts were validated on the way in (add or decode).
		if p, err := ParseHostPattern(h); err == nil {
			c.hosts = append(c.hosts, p)
		}
	}
	return c
}

type bindingScore struct{ host, path int }

func pickCredential(creds map[string]cachedCredential, host string, port int, path string) (CredentialView, error) {
	var best CredentialView
	var bestScore bindingScore
	found, tie := false, false
	for _, c := range creds {
		s, ok := c.score(host, port, path)
		if !ok {
			continue
		}
		switch {
		case !found || s.host > bestScore.host || (s.host == bestScore.host && s.path > bestScore.path):
			best, bestScore, found, tie = c.view, s, true, false
		case s == bestScore:
			tie = true
		}
	}
	switch {
	case !found:
		return CredentialView{}, ErrNoCredential
	case tie:
		return CredentialView{}, ErrAmbiguousCredential
	}
	return best, nil
}

func (c cachedCredential) score(host string, port int, path string) (bindingScore, bool) {
	var s bindingScore
	hostOK, pathOK := false, false
	for _, p := range c.hosts {
		if score, ok := p.match(host, port); ok && (!hostOK || score > s.host) {
			s.host, hostOK = score, true
		}
	}
	for _, p := range c.view.PathPrefixes {
		if pathMatch(p, path) && (!pathOK || len(p) > s.path) {
			s.path, pathOK = len(p), true
		}
	}
	return s, hostOK && pathOK
}

// readRecord reads one record from the file while unlocked, checks it
// against the manifest, opens it and hands the plaintext to decode (which
// must not keep it: it is zeroed afterwards). A record that disappeared, no
// longer authenticates, moved version or does not decode is damage found
// while unlocked: the session is lost and a *DamagedError names the record.
// v.mu held.
func (v *Vault) readRecord(ref recordRef, decode func(plaintext []byte) error) error {
	rows, err := v.recordByID(ref.ID)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	var damage *DamagedError
	if len(rows) != 1 {
		damage = &DamagedError{Where: recordWhere(ref), Reason: "it disappeared from the file while the vault was unlocked"}
	} else if err := checkAgainstManifest(rows[0].ref(), map[string]recordRef{ref.ID: ref}); err != nil {
		damage = err.(*DamagedError)
	} else if pt, err := openRecord(v.keys, v.hdr.VaultID, ref, rows[0].Sealed); err != nil {
		damage = &DamagedError{Where: recordWhere(ref), Reason: "it no longer authenticates"}
	} else {
		err := decode(pt)
		clear(pt)
		if err == nil {
			return nil
		}
		damage = &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	v.session().loseSession(damage)
	return damage
}

// recordByID reads one record row through a statement prepared once per
// open database: a call reads its credential's record right before it
// leaves, and parsing the query again each time cost more than the read.
// v.mu held.
func (v *Vault) recordByID(id string) ([]recordRow, error) {
	if v.recordStmt == nil || v.recordStmtDB != v.db {
		v.closeRecordStmt()
		sqlDB, err := v.db.DB()
		if err != nil {
			return nil, err
		}
		if v.recordStmt, err = sqlDB.Prepare(`SELECT id, kind, version, sealed FROM vault_records WHERE id = ?`); err != nil {
			return nil, err
		}
		v.recordStmtDB = v.db
	}
	rs, err := v.recordStmt.Query(id)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var rows []recordRow
	for rs.Next() {
		var r recordRow
		if err := rs.Scan(&r.ID, &r.Kind, &r.Version, &r.Sealed); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, rs.Err()
}

// closeRecordStmt drops the prepared statement (the database is closing or
// being swapped). v.mu held.
func (v *Vault) closeRecordStmt() {
	if v.recordStmt != nil {
		v.recordStmt.Close()
		v.recordStmt, v.recordStmtDB = nil, nil
	}
}

// SetAutoLockAfter sets and stores the idle auto-lock time (1 minute to 7
// days) in the sealed settings record, and restarts the idle timer.
// Errors: ErrLocked, ErrInvalid.
func (v *Vault) SetAutoLockAfter(d time.Duration) error {
	if err := checkAutoLock(d); err != nil {
		return err
	}
	return v.changeSettings(ChangeAutoLock, "auto-lock time changed", func(s *settingsRecord) { s.AutoLockAfter = d }, func() {
		v.autoLock = d
		v.idle().restartIdleTimer()
	})
}

// putSettingsLocked seals rec as the settings record's next version.
// v.mu held.
func (v *Vault) putSettingsLocked(rec settingsRecord) error {
	ref := recordRef{ID: settingsID, Kind: kindSettings, Version: 1}
	if old, ok := v.refs[settingsID]; ok {
		ref.Version = old.Version + 1
	}
	pt, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = v.putRecord(ref, pt)
	return err
}

// ControlsBlob returns the sealed controls, nil when none were set yet.
// They live in the sealed settings record, authenticated and versioned
// with the vault's other records: a program of the user can delete or
// roll back the vault file, which the vault reports as damage, but it
// cannot change a control. What they mean is the composition root's
// (backend/keeper); the vault only keeps them. Errors: ErrLocked.
func (v *Vault) ControlsBlob() ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	return bytes.Clone(v.controls), nil
}

// SetControlsBlob stores b (JSON, at most 256 KiB) as the sealed controls
// and announces an EventChanged with ChangeControls and why as its reason.
// Errors: ErrLocked, ErrInvalid.
func (v *Vault) SetControlsBlob(b []byte, why string) error {
	if len(b) > maxControls || !json.Valid(b) {
		return fmt.Errorf("%w: controls must be JSON of at most %d bytes", ErrInvalid, maxControls)
	}
	return v.changeSettings(ChangeControls, why, func(s *settingsRecord) { s.Controls = b }, func() { v.controls = bytes.Clone(b) })
}
