package team

import (
	"errors"
	"net/url"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/witness"
)

// WitnessSettings name the team's witness (yett witness serve) for this
// machine: where to submit and the key its cosignatures must carry. They
// are sealed with the membership because an address edited in a file
// would let anyone stop the machine's checkpoints from being witnessed
// without a trace on the machine.
type WitnessSettings struct {
	// URL is the witness's submission prefix, http or https
	// ("http://127.0.0.1:7380" through a tunnel).
	URL string `json:"url"`
	// Key is the witness's verifier key (yett witness key).
	Key string `json:"key"`
}

// Check says whether the settings name a witness a machine can use.
func (w WitnessSettings) Check() error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("team: the witness's address is an http or https URL with a host and no user, query or fragment")
	}
	if _, err := witness.NewVerifier(w.Key); err != nil {
		return errors.New("team: the witness's key is not a witness verifier key (yett witness key prints it)")
	}
	return nil
}

// Verifier is the witness's key, parsed (Check first).
func (w WitnessSettings) Verifier() (*witness.Verifier, error) { return witness.NewVerifier(w.Key) }

// SetWitness names the team's witness in this machine's membership (nil:
// none); a running Yett follows the change (ChangeTeamUpdated). Errors:
// vault.ErrNoTeam, vault.ErrLocked, settings that do not Check.
func SetWitness(t *vault.Team, w *WitnessSettings) error {
	if w != nil {
		if err := w.Check(); err != nil {
			return err
		}
	}
	c, err := Load(t)
	if err != nil {
		return err
	}
	defer c.Wipe()
	c.Witness = w
	return save(t, c, vault.ChangeTeamUpdated)
}
