package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This machine's membership of a Yett team is one sealed record of kind
// "team" (there is at most one): where the team's database is and which
// role this machine logs in as (Meta, JSON that backend/team writes and
// reads), and the credentials that must never leave the vault (Secrets: the
// role's password, the machine's team signing key, and on a lead's machine
// the administrative role's password). The vault checks shapes and bounds
// only; what they mean is backend/team's.
//
// It is read from the file and authenticated on every call, like the audit
// key, and not cached: the team syncer reads it once when the vault
// unlocks, and the team commands once each.
const (
	kindTeam     = "team"
	teamRecordID = "team"
)

// Changes to the team membership, announced in EventChanged with the team
// named in Event.Credential (id "team", the team's name, the record's
// version): the composition root records each as a person's change.
const (
	ChangeTeamJoined  Change = "team_joined"
	ChangeTeamUpdated Change = "team_updated"
	ChangeTeamLeft    Change = "team_left"
)

// ErrNoTeam: this vault holds no team membership.
var ErrNoTeam = errors.New("vault: this machine belongs to no team")

// Bounds of a team record.
const (
	maxTeamMeta    = 16 << 10
	maxTeamSecrets = 8
	maxTeamSecret  = 4 << 10
)

// TeamRecord is a team membership as sealed. The caller wipes Secrets
// (WipeSecrets) once it has used them.
type TeamRecord struct {
	// Name names the team in the vault's events; at most 100 characters.
	Name string
	// Meta is the membership's part that is no secret (JSON, at most 16
	// KiB). It is sealed all the same: a database address edited in the
	// file would send the machine's password elsewhere.
	Meta json.RawMessage
	// Secrets are credentials by name (at most 8, each at most 4 KiB).
	Secrets map[string]*Secret
}

// WipeSecrets zeroes every secret of r.
func (r *TeamRecord) WipeSecrets() {
	for _, s := range r.Secrets {
		s.Wipe()
	}
}

// teamRecord is the plaintext sealed in a "team" record.
type teamRecord struct {
	Name    string            `json:"name"`
	Meta    json.RawMessage   `json:"meta"`
	Secrets map[string][]byte `json:"secrets"`
}

func (r *teamRecord) wipe() {
	for _, b := range r.Secrets {
		clear(b)
	}
}

func (r TeamRecord) validate() error {
	if r.Name == "" || utf8.RuneCountInString(r.Name) > 100 || !printable(r.Name, 400) {
		return invalid("a team's name is 1-100 printable characters")
	}
	if len(r.Meta) == 0 || len(r.Meta) > maxTeamMeta || !json.Valid(r.Meta) {
		return invalid("a team's description is JSON of at most %d bytes", maxTeamMeta)
	}
	if len(r.Secrets) > maxTeamSecrets {
		return invalid("a team record holds at most %d secrets", maxTeamSecrets)
	}
	for name, s := range r.Secrets {
		if name == "" || len(name) > 64 || strings.ContainsAny(name, " \t\n\x00") || s == nil || s.Len() == 0 || s.Len() > maxTeamSecret {
			return invalid("a team secret has a short name and 1 to %d bytes", maxTeamSecret)
		}
	}
	return nil
}

// decodeTeam parses a team record's plaintext. Errors never quote it.
func decodeTeam(plaintext []byte) (*teamRecord, error) {
	var r teamRecord
	if err := json.Unmarshal(plaintext, &r); err != nil {
		return nil, errors.New("not a team record")
	}
	secrets := make(map[string]*Secret, len(r.Secrets))
	for k, b := range r.Secrets {
		secrets[k] = &Secret{b: b}
	}
	if err := (TeamRecord{Name: r.Name, Meta: r.Meta, Secrets: secrets}).validate(); err != nil {
		r.wipe()
		return nil, errors.New("the team record is malformed")
	}
	return &r, nil
}

// checkTeamRecord is verifyAll's check of a team record at unlock.
func checkTeamRecord(ref recordRef, plaintext []byte) error {
	if ref.ID != teamRecordID {
		return &DamagedError{Where: recordWhere(ref), Reason: "a team record under another id (there is only ever one)"}
	}
	r, err := decodeTeam(plaintext)
	if err != nil {
		return &DamagedError{Where: recordWhere(ref), Reason: err.Error()}
	}
	r.wipe()
	return nil
}

// Team is the vault's team membership record.
type Team struct{ *Vault }

// Team returns the vault's team membership record.
func (v *Vault) Team() *Team { return &Team{v} }

// Put seals r as the team membership, replacing the one there is (change
// says which: ChangeTeamJoined or ChangeTeamUpdated). Errors: ErrLocked,
// ErrInvalid (naming the rule, never a value).
func (t *Team) Put(r TeamRecord, change Change) error {
	if err := r.validate(); err != nil {
		return err
	}
	rec := teamRecord{Name: r.Name, Meta: r.Meta, Secrets: make(map[string][]byte, len(r.Secrets))}
	for k, s := range r.Secrets {
		rec.Secrets[k] = s.b
	}
	pt, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer clear(pt)
	return t.putSingle(teamRecordID, kindTeam, pt, change, r.Name)
}

// Open reads the team membership from the file, authenticated now. The
// caller wipes its secrets (TeamRecord.WipeSecrets).
// Errors: ErrLocked, ErrNoTeam, ErrDamaged (the record no longer
// authenticates: the session is lost).
func (t *Team) Open() (TeamRecord, error) {
	var out TeamRecord
	err := t.readSingle(teamRecordID, ErrNoTeam, func(pt []byte) error {
		r, err := decodeTeam(pt)
		if err != nil {
			return err
		}
		out = TeamRecord{Name: r.Name, Meta: append(json.RawMessage(nil), r.Meta...), Secrets: make(map[string]*Secret, len(r.Secrets))}
		for k, b := range r.Secrets {
			s := NewSecret(b)
			out.Secrets[k] = &s
		}
		r.wipe()
		return nil
	})
	if err != nil {
		return TeamRecord{}, err
	}
	return out, nil
}

// Has says whether the vault holds a team membership. Errors: ErrLocked.
func (t *Team) Has() (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return false, err
	}
	_, ok := t.refs[teamRecordID]
	return ok, nil
}

// Remove deletes the team membership (the machine left the team, or was
// removed from it). Errors: ErrLocked, ErrNoTeam.
func (t *Team) Remove(name string) error {
	return t.deleteSingle(teamRecordID, ErrNoTeam, ChangeTeamLeft, func(recordRef) string { return name })
}
