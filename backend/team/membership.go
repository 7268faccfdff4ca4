package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/yettdev/yett/backend/vault"
)

// Membership is this machine's place in a team: no secret. It is sealed
// in the vault all the same (vault.TeamRecord's Meta): an address edited
// in a file would send the machine's password elsewhere.
type Membership struct {
	TeamID   string   `json:"team_id"`
	TeamName string   `json:"team_name"`
	Database Database `json:"database"`
	// Machine is this machine's id in the team: its login role's name.
	Machine  string `json:"machine"`
	Member   string `json:"member"`
	Kind     string `json:"kind"`
	Hostname string `json:"hostname"`
	// PublicKey is this machine's team signing key's public half.
	PublicKey string `json:"public_key"`
	// FoundingLeadKey is the key that signs the revocation requests this
	// machine acts on, pinned when it joined.
	FoundingLeadKey string `json:"founding_lead_key"`
	// AdminRole is the administrative role, on the lead's machine that
	// created the team ("" elsewhere).
	AdminRole string    `json:"admin_role,omitempty"`
	JoinedAt  time.Time `json:"joined_at"`
	// Witness is the team's witness this machine asks to cosign its audit
	// checkpoints (SetWitness); nil: none.
	Witness *WitnessSettings `json:"witness,omitempty"`
}

// Names of the secrets in the vault's team record.
const (
	secretPassword      = "password"
	secretSigningKey    = "signing_key"
	secretAdminPassword = "admin_password"
)

// Credentials are a membership with what opens it: the role's password,
// the signing key and, on the founding lead's machine, the administrative
// role's password. They live in memory only while the vault is unlocked
// and are wiped when done (Wipe).
type Credentials struct {
	Membership
	password      vault.Secret
	key           *SigningKey
	adminPassword vault.Secret
}

// Lead says whether this machine's role reads every machine's rows.
func (c *Credentials) Lead() bool { return c.Kind == KindLead }

// CanAdminister says whether this vault holds the administrative role's
// password (yett team invite and remove).
func (c *Credentials) CanAdminister() bool { return c.AdminRole != "" && c.adminPassword.Len() > 0 }

// Wipe zeroes every secret.
func (c *Credentials) Wipe() {
	c.password.Wipe()
	c.adminPassword.Wipe()
	if c.key != nil {
		c.key.Wipe()
	}
}

// Load reads this machine's team membership from the vault.
// Errors: vault.ErrNoTeam, vault.ErrLocked, or a malformed record.
func Load(t *vault.Team) (*Credentials, error) {
	rec, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer rec.WipeSecrets()
	var c Credentials
	if err := json.Unmarshal(rec.Meta, &c.Membership); err != nil {
		return nil, errors.New("team: the vault's team record does not read")
	}
	if rec.Secrets[secretPassword] == nil {
		return nil, errors.New("team: the vault's team record holds no password")
	}
	c.password = vault.NewSecret(rec.Secrets[secretPassword].Bytes())
	if c.key, err = signingKeyFrom(rec.Secrets[secretSigningKey]); err != nil {
		c.Wipe()
		return nil, err
	}
	if a := rec.Secrets[secretAdminPassword]; a != nil {
		c.adminPassword = vault.NewSecret(a.Bytes())
	}
	return &c, nil
}

// save seals c in the vault as this machine's team membership.
func save(t *vault.Team, c *Credentials, change vault.Change) error {
	meta, err := json.Marshal(c.Membership)
	if err != nil {
		return fmt.Errorf("team: %w", err)
	}
	seed := vault.NewSecret(c.key.priv.Seed())
	defer seed.Wipe()
	pw := vault.NewSecret(c.password.Bytes())
	defer pw.Wipe()
	secrets := map[string]*vault.Secret{secretPassword: &pw, secretSigningKey: &seed}
	if c.adminPassword.Len() > 0 {
		ap := vault.NewSecret(c.adminPassword.Bytes())
		defer ap.Wipe()
		secrets[secretAdminPassword] = &ap
	}
	name := c.TeamName
	if name == "" {
		name = c.TeamID
	}
	return t.Put(vault.TeamRecord{Name: name, Meta: meta, Secrets: secrets}, change)
}
