package team

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/store"
)

// OutboxFile is the team syncer's local database in the data directory:
// what waits to be shared, what was shared last (as digests, so an
// unchanged record is not queued again), the revocation requests this
// machine received and answered, and when it last synced. It holds no
// secret: every record in it is one the team database is meant to hold.
const OutboxFile = "team.db"

// Kinds of outbox items, each applied to the team database by its own
// idempotent statement (sync.go).
const (
	itemRow         = "row"
	itemDrill       = "drill"
	itemCheckpoint  = "checkpoint"
	itemCosignature = "cosignature"
	itemAnswer      = "answer"
	itemRefusal     = "witness-refusal"
)

func outboxHistory() []store.Migration {
	return []store.Migration{{Version: 1, Name: "team outbox", Up: store.Statements(
		// seq orders the items and is the version an upsert of a row
		// carries: the database keeps the row of the highest seq, so a
		// resend of an older item changes nothing.
		`CREATE TABLE outbox (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			kind TEXT NOT NULL,
			key TEXT NOT NULL,
			payload BLOB NOT NULL,
			queued_at INTEGER NOT NULL
		)`,
		`CREATE INDEX outbox_by_key ON outbox (kind, key)`,
		`CREATE TABLE shared (
			kind TEXT NOT NULL,
			key TEXT NOT NULL,
			digest TEXT NOT NULL,
			PRIMARY KEY (kind, key)
		)`,
		`CREATE TABLE requests (
			uid TEXT PRIMARY KEY,
			request_id INTEGER NOT NULL,
			row_id TEXT NOT NULL,
			status TEXT NOT NULL,
			received_at INTEGER NOT NULL,
			answered_at INTEGER NOT NULL
		)`,
		`CREATE TABLE sync_state (
			id INTEGER PRIMARY KEY CHECK (id = 1),
			team_id TEXT NOT NULL,
			machine TEXT NOT NULL,
			last_synced INTEGER NOT NULL,
			last_synced_local INTEGER NOT NULL,
			seq_base INTEGER
		)`,
	)}}
}

// outbox is the local, durable, ordered queue of what this machine shares.
type outbox struct {
	// db prepares each statement once: a pass over the inventory runs the
	// same few statements for every row, and parsing them again cost more
	// than running them.
	db  *gorm.DB
	raw *gorm.DB
}

// item is one queued record.
type item struct {
	Seq     int64
	Kind    string
	Key     string
	Payload []byte
}

// openOutbox opens team.db for the machine of creds. An outbox left by
// another membership (the machine left a team and joined another) is
// emptied: its records belong to a database this machine no longer
// writes.
func openOutbox(dataDir string, c *Credentials) (*outbox, error) {
	db, err := store.Open(filepath.Join(dataDir, OutboxFile), outboxHistory())
	if err != nil {
		return nil, fmt.Errorf("team: the outbox: %w", err)
	}
	o := &outbox{db: db.Session(&gorm.Session{PrepareStmt: true}), raw: db}
	err = db.Transaction(func(tx *gorm.DB) error {
		var team, machine string
		tx.Raw(`SELECT team_id, machine FROM sync_state WHERE id = 1`).Row().Scan(&team, &machine)
		if team == c.TeamID && machine == c.Machine {
			return nil
		}
		for _, stmt := range []string{`DELETE FROM outbox`, `DELETE FROM shared`, `DELETE FROM requests`, `DELETE FROM sync_state`} {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		return tx.Exec(`INSERT INTO sync_state (id, team_id, machine, last_synced, last_synced_local) VALUES (1, ?, ?, 0, 0)`,
			c.TeamID, c.Machine).Error
	})
	if err != nil {
		store.Close(db)
		return nil, fmt.Errorf("team: the outbox: %w", err)
	}
	return o, nil
}

func (o *outbox) close() error {
	if p, ok := o.db.Statement.ConnPool.(*gorm.PreparedStmtDB); ok {
		p.Close()
	}
	return store.Close(o.raw)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// queued is an item to add to the outbox.
type queued struct {
	kind, key string
	payload   []byte
}

// queue adds an item unless the same record was shared (or queued) with
// the same digest already; a newer version of a row replaces an older one
// still waiting, since only the newest counts. It says whether it queued.
func (o *outbox) queue(kind, key string, payload []byte, now time.Time) (bool, error) {
	n, err := o.queueAll([]queued{{kind, key, payload}}, now)
	return n == 1, err
}

// queueAll is queue for many items in one transaction (one sync to the
// disk for a whole pass over the inventory); it returns how many it
// queued.
func (o *outbox) queueAll(items []queued, now time.Time) (int, error) {
	n := 0
	err := o.db.Transaction(func(tx *gorm.DB) error {
		n = 0
		var rows []struct{ Kind, Key, Digest string }
		if err := tx.Raw(`SELECT kind, key, digest FROM shared`).Scan(&rows).Error; err != nil {
			return err
		}
		last := make(map[[2]string]string, len(rows))
		for _, r := range rows {
			last[[2]string{r.Kind, r.Key}] = r.Digest
		}
		for _, it := range items {
			d := digest(it.payload)
			if last[[2]string{it.kind, it.key}] == d {
				continue
			}
			if it.kind == itemRow {
				if err := tx.Exec(`DELETE FROM outbox WHERE kind = ? AND key = ?`, it.kind, it.key).Error; err != nil {
					return err
				}
			}
			if err := tx.Exec(`INSERT INTO outbox (kind, key, payload, queued_at) VALUES (?, ?, ?, ?)`, it.kind, it.key, it.payload, now.Unix()).Error; err != nil {
				return err
			}
			if err := tx.Exec(`INSERT INTO shared (kind, key, digest) VALUES (?, ?, ?) ON CONFLICT (kind, key) DO UPDATE SET digest = excluded.digest`,
				it.kind, it.key, d).Error; err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// sharedKeys lists the keys of kind shared or queued so far.
func (o *outbox) sharedKeys(kind string) (map[string]string, error) {
	var rows []struct{ Key, Digest string }
	if err := o.db.Raw(`SELECT key, digest FROM shared WHERE kind = ?`, kind).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Digest
	}
	return out, nil
}

// next returns up to n items, oldest first.
func (o *outbox) next(n int) ([]item, error) {
	var items []item
	err := o.db.Raw(`SELECT seq, kind, key, payload FROM outbox ORDER BY seq LIMIT ?`, n).Scan(&items).Error
	return items, err
}

// done removes items the database acknowledged (its transaction
// committed). A crash before this resends them: every statement that
// applies an item is idempotent.
func (o *outbox) done(seqs []int64) error {
	if len(seqs) == 0 {
		return nil
	}
	return o.db.Exec(`DELETE FROM outbox WHERE seq IN ?`, seqs).Error
}

// waiting counts the items not yet acknowledged.
func (o *outbox) waiting() int {
	var n int
	o.db.Raw(`SELECT count(*) FROM outbox`).Scan(&n)
	return n
}

// synced records a successful sync: the database's time and this
// machine's.
func (o *outbox) synced(server, local time.Time) error {
	return o.db.Exec(`UPDATE sync_state SET last_synced = ?, last_synced_local = ? WHERE id = 1`, server.Unix(), local.Unix()).Error
}

// seqBase is what the items' seq start from in the team database, read
// from it once per outbox (nil until then): an outbox made again (its
// file deleted, or the machine rejoined) starts counting at 1, and its
// rows must still be newer than the ones it shared before.
func (o *outbox) seqBase() (int64, bool) {
	var b *int64
	o.db.Raw(`SELECT seq_base FROM sync_state WHERE id = 1`).Scan(&b)
	if b == nil {
		return 0, false
	}
	return *b, true
}

func (o *outbox) setSeqBase(b int64) error {
	return o.db.Exec(`UPDATE sync_state SET seq_base = ? WHERE id = 1 AND seq_base IS NULL`, b).Error
}

// lastSynced is the database's time at the last successful sync (zero:
// never).
func (o *outbox) lastSynced() time.Time {
	var s int64
	o.db.Raw(`SELECT last_synced FROM sync_state WHERE id = 1`).Scan(&s)
	return store.FromUnixSeconds(s)
}

// ReadStatus says what the outbox in dataDir holds for the membership of
// c, for a process that runs no syncer (yett team status): when it last
// synced and how much waits. Connected is never set here.
func ReadStatus(dataDir string, c *Credentials) (Status, error) {
	o, err := openOutbox(dataDir, c)
	if err != nil {
		return Status{}, err
	}
	defer o.close()
	return Status{TeamName: c.TeamName, Machine: c.Hostname, Member: c.Member, Lead: c.Lead(), LastSynced: o.lastSynced(), Waiting: o.waiting()}, nil
}
