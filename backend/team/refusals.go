package team

import (
	"encoding/hex"
	"strconv"

	"github.com/yettdev/yett/backend/audit"
)

// refusalSchema: the witness's refusals of a machine's checkpoints, as
// the machine recorded them (checkpoint_refused), so the lead's view says
// that a machine's log was cut back or rewritten without reading the
// witness's own tables. One row per refusal the machine recorded: a
// refusal is the same fact at every later size.
func refusalSchema(r roles) []string {
	return append([]string{
		`CREATE TABLE team_witness_refusals (
			machine_id text NOT NULL,
			log_id text NOT NULL,
			witness text NOT NULL CHECK (length(witness) <= 256),
			witness_size bigint NOT NULL,
			reason text NOT NULL CHECK (reason IN ('rollback', 'fork')),
			size bigint NOT NULL CHECK (size >= 0),
			checkpoint text NOT NULL CHECK (octet_length(checkpoint) <= 16384),
			signature text NOT NULL,
			received_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (machine_id, log_id, witness, witness_size, reason))`,
	}, ownRows(r, "team_witness_refusals", false)...)
}

// sharedRefusal is a witness's refusal of one of the machine's
// checkpoints: which witness, what it had cosigned (WitnessSize), why,
// and the checkpoint it refused, signed by the log.
type sharedRefusal struct {
	LogID       string `json:"log_id"`
	Witness     string `json:"witness"`
	WitnessSize int64  `json:"witness_size"`
	Reason      string `json:"reason"`
	Size        int64  `json:"size"`
	Checkpoint  string `json:"checkpoint"`
	Signature   string `json:"signature"`
}

func (r *sharedRefusal) key() string {
	return r.LogID + ":" + r.Witness + ":" + strconv.FormatInt(r.WitnessSize, 10) + ":" + r.Reason
}

func (r *sharedRefusal) sign(k *SigningKey, team, machine string) {
	r.Signature = k.sign(team, domainRefusal, machine, r.LogID, r.Witness, strconv.FormatInt(r.WitnessSize, 10), r.Reason,
		strconv.FormatInt(r.Size, 10), r.Checkpoint)
}

// PublishRefusal queues a witness's refusal of checkpoint cp, as the
// machine recorded it in its log (witness.Submitter's Refused).
func (s *Syncer) PublishRefusal(cp audit.Checkpoint, f audit.WitnessFacts) {
	rec := sharedRefusal{LogID: hex.EncodeToString(cp.LogID[:]), Witness: f.Witness, WitnessSize: f.WitnessSize, Reason: f.Reason,
		Size: cp.Size, Checkpoint: string(cp.Text)}
	s.publishing(func() {
		if _, err := s.queue(itemRefusal, rec.key(), &rec); err != nil {
			s.log.Warn("team: a witness's refusal could not be queued", "err", err)
			return
		}
		s.send()
	})
}
