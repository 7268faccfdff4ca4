package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A team witness run by this machine (`yett witness`) is one sealed record
// of kind "witness" (there is at most one): the witness's name, the seed of
// its Ed25519 signing key, and the address of the database it keeps its
// state in, password included. The key is what makes a cosignature worth
// anything, and the address carries a database password: both stay in the
// vault, never in a file or on a command line. The vault checks shapes and
// bounds only; what they mean is backend/witness's.
const (
	kindWitness     = "witness"
	witnessRecordID = "witness"
)

// Changes to the witness record, announced in EventChanged with the witness
// named in Event.Credential (id "witness", its name, the record's version).
const (
	ChangeWitnessSet     Change = "witness_set"
	ChangeWitnessRemoved Change = "witness_removed"
)

// ErrNoWitness: this vault holds no witness key.
var ErrNoWitness = errors.New("vault: this machine runs no witness (yett witness init makes one)")

// Bounds of a witness record.
const (
	witnessSeedLen     = 32
	maxWitnessName     = 256
	maxWitnessDatabase = 4 << 10
)

// WitnessRecord is a witness's key and database as sealed. The caller wipes
// Seed and Database once it has used them.
type WitnessRecord struct {
	// Name is the witness's name, the key name of its cosignatures (no
	// spaces, no '+').
	Name string
	// Seed is the Ed25519 private key's seed (32 bytes).
	Seed Secret
	// Database is the PostgreSQL address the witness keeps its state in.
	Database Secret
}

// Wipe zeroes the record's secrets.
func (r *WitnessRecord) Wipe() {
	r.Seed.Wipe()
	r.Database.Wipe()
}

// witnessRecord is the plaintext sealed in a "witness" record.
type witnessRecord struct {
	Name     string `json:"name"`
	Seed     []byte `json:"seed"`
	Database []byte `json:"database"`
}

func (r WitnessRecord) validate() error {
	if r.Name == "" || len(r.Name) > maxWitnessName || !utf8.ValidString(r.Name) ||
		strings.IndexFunc(r.Name, unicode.IsSpace) >= 0 || strings.Contains(r.Name, "+") {
		return invalid("a witness's name is 1-%d bytes with no spaces and no '+'", maxWitnessName)
	}
	if r.Seed.Len() != witnessSeedLen {
		return invalid("a witness key's seed is %d bytes", witnessSeedLen)
	}
	if r.Database.Len() == 0 || r.Database.Len() > maxWitnessDatabase {
		return invalid("a witness's database address is 1 to %d bytes", maxWitnessDatabase)
	}
	return nil
}

// decodeWitness parses a witness record's plaintext. Errors never quote it.
func decodeWitness(plaintext []byte) (WitnessRecord, error) {
	var r witnessRecord
	if err := json.Unmarshal(plaintext, &r); err != nil {
		return WitnessRecord{}, errors.New("not a witness record")
	}
	out := WitnessRecord{Name: r.Name, Seed: NewSecret(r.Seed), Database: NewSecret(r.Database)}
	clear(r.Seed)
	clear(r.Database)
	if err := out.validate(); err != nil {
		out.Wipe()
		return WitnessRecord{}, errors.New("the witness record is malformed")
	}
	return out, nil
}

// checkWitnessRecord is verifyAll's check of a witness record at unlock.
func checkWitnessRecord(ref recordRef, plaintext []byte) error {
	if ref.ID != witnessRecordID {
		return &DamagedError{Where: recordWhere(ref), Reason: "a witness record under another id (there is only ever one)"}
	}
	r, err := decodeWitness(plaintext)
	if err != nil {
		return &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	r.Wipe()
	return nil
}

// WitnessKey is the vault's witness record.
type WitnessKey struct{ *Vault }

// WitnessKey returns the vault's witness record.
func (v *Vault) WitnessKey() *WitnessKey { return &WitnessKey{v} }

// Put seals r as the witness, replacing the one there is. The caller still
// wipes r. Errors: ErrLocked, ErrInvalid (naming the rule, never a value).
func (w *WitnessKey) Put(r WitnessRecord) error {
	if err := r.validate(); err != nil {
		return err
	}
	pt, err := json.Marshal(witnessRecord{Name: r.Name, Seed: r.Seed.b, Database: r.Database.b})
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer clear(pt)
	return w.putSingle(witnessRecordID, kindWitness, pt, ChangeWitnessSet, r.Name)
}

// Open reads the witness record from the file, authenticated now. The
// caller wipes it (WitnessRecord.Wipe). Errors: ErrLocked, ErrNoWitness,
// ErrDamaged (the record no longer authenticates: the session is lost).
func (w *WitnessKey) Open() (WitnessRecord, error) {
	var out WitnessRecord
	err := w.readSingle(witnessRecordID, ErrNoWitness, func(pt []byte) (err error) {
		out, err = decodeWitness(pt)
		return err
	})
	return out, err
}

// Remove deletes the witness record. Errors: ErrLocked, ErrNoWitness.
func (w *WitnessKey) Remove() error {
	return w.deleteSingle(witnessRecordID, ErrNoWitness, ChangeWitnessRemoved, func(ref recordRef) string {
		var name string
		w.readRecord(ref, func(pt []byte) error {
			r, err := decodeWitness(pt)
			name = r.Name
			r.Wipe()
			return err
		})
		return name
	})
}
