package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
)

// Inventory is what the syncer reads of the owner inventory
// (*inventory.Inventory satisfies it).
type Inventory interface {
	Rows(ctx context.Context, f inventory.Filter) ([]inventory.Row, error)
	Drills(id string, limit int) ([]inventory.Report, error)
	Subscribe(fn func(inventory.Change)) (cancel func())
}

// Revoker revokes an OAuth authorization as a person's Revoke does: local
// disable, RFC 7009 at the provider, verification (*oauth.Custody
// satisfies it).
type Revoker interface {
	Revoke(ctx context.Context, id string) (oauth.RevokeReport, error)
}

// Defaults of a Syncer.
const (
	// DefaultPoll is how often the syncer looks at the inventory and the
	// requests table without being told: review dates come due and
	// notifications can be lost.
	DefaultPoll = time.Minute
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// reconnection, doubled after each failure.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 5 * time.Minute
	// batch is how many outbox items go in one transaction.
	batch = 200
)

// Config is what a Syncer needs. DataDir and Inventory are required.
type Config struct {
	DataDir   string
	Inventory Inventory
	// Revoker acts on revocation requests; nil refuses them (a process
	// without OAuth custody).
	Revoker Revoker
	// Ready says the inventory can be read whole now (the vault is
	// unlocked): a locked vault lists no credential, and a row missing
	// from a read is shared as removed. nil: always.
	Ready   func() bool
	Logger  *slog.Logger
	Version string
	// Now is this machine's clock; nil is time.Now. Times the team
	// compares come from the database's clock; this one is only reported
	// (the skew).
	Now                    func() time.Time
	Poll                   time.Duration
	MinBackoff, MaxBackoff time.Duration
}

// Status is what the syncer tells front ends.
type Status struct {
	TeamName string `json:"team_name"`
	Machine  string `json:"machine"`
	Member   string `json:"member"`
	Lead     bool   `json:"lead"`
	// Connected: the database answers now.
	Connected bool `json:"connected"`
	// LastSynced is the database's time when everything queued before it
	// had reached the database (zero: never).
	LastSynced time.Time `json:"last_synced"`
	// Waiting counts the records queued and not yet acknowledged.
	Waiting int `json:"waiting"`
	// Problem says, in words for the person, why it is not connected.
	Problem string `json:"problem"`
}

// Syncer shares one machine's inventory, drills and checkpoints with its
// team, and answers the lead's revocation requests. It works while the
// database cannot be reached: what it shares waits in the outbox. Safe for
// concurrent use.
type Syncer struct {
	cfg   Config
	creds *Credentials
	box   *outbox
	log   *slog.Logger

	kick    chan struct{} // something was queued: send it
	collect chan struct{} // the inventory changed: read it again

	mu     sync.Mutex
	status Status
	// pubMu keeps the publishers that other parts call (PublishCheckpoint,
	// PublishCosigned) from signing while Close wipes the key.
	pubMu  sync.RWMutex
	closed bool

	changes feed.Feed[Status]
	unsub   func()
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// Start opens the outbox and starts sharing. The syncer owns creds from
// now on and wipes them at Close.
func Start(cfg Config, creds *Credentials) (*Syncer, error) {
	if cfg.DataDir == "" || cfg.Inventory == nil || creds == nil {
		return nil, errors.New("team: DataDir, Inventory and credentials are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Ready == nil {
		cfg.Ready = func() bool { return true }
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	box, err := openOutbox(cfg.DataDir, creds)
	if err != nil {
		return nil, err
	}
	s := &Syncer{cfg: cfg, creds: creds, box: box, log: cfg.Logger, kick: make(chan struct{}, 1), collect: make(chan struct{}, 1)}
	s.status = Status{TeamName: creds.TeamName, Machine: creds.Hostname, Member: creds.Member, Lead: creds.Lead(),
		LastSynced: box.lastSynced(), Waiting: box.waiting(), Problem: "Not connected to the team database yet."}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.unsub = cfg.Inventory.Subscribe(func(inventory.Change) { s.Collect() })
	s.wg.Add(2)
	go s.collector()
	go s.sender()
	return s, nil
}

// Close stops sharing, closes the outbox (what waits in it goes out at
// the next Start) and wipes the credentials.
func (s *Syncer) Close() error {
	s.unsub()
	s.stop()
	s.wg.Wait()
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.creds.Wipe()
	return s.box.close()
}

// publishing runs fn unless the syncer closed; false when it did.
func (s *Syncer) publishing(fn func()) bool {
	s.pubMu.RLock()
	defer s.pubMu.RUnlock()
	if s.closed {
		return false
	}
	fn()
	return true
}

// Status says how the syncer is doing now.
func (s *Syncer) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Subscribe tells fn every change of Status, as backend/feed delivers.
func (s *Syncer) Subscribe(fn func(Status)) (cancel func()) { return s.changes.Subscribe(fn) }

func (s *Syncer) setStatus(edit func(*Status)) {
	s.mu.Lock()
	edit(&s.status)
	st := s.status
	s.mu.Unlock()
	s.changes.Publish(st)
}

// Collect makes the syncer read the inventory again now.
func (s *Syncer) Collect() {
	select {
	case s.collect <- struct{}{}:
	default:
	}
}

func (s *Syncer) send() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// collector reads the inventory into the outbox at start, after every
// change and every Poll.
func (s *Syncer) collector() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if err := s.collectOnce(s.ctx); err != nil && s.ctx.Err() == nil {
			s.log.Warn("team: the inventory could not be read for sharing", "err", err)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.collect:
		}
	}
}

// collectOnce queues every row that changed since it was last queued,
// a tombstone for every row gone, and the drill reports not shared yet.
// It reads nothing while the inventory is not whole (a locked vault), and
// drops what it read if the vault locked meanwhile.
func (s *Syncer) collectOnce(ctx context.Context) error {
	if !s.cfg.Ready() {
		return nil
	}
	rows, err := s.cfg.Inventory.Rows(ctx, inventory.Filter{})
	if err != nil {
		return err
	}
	reports, err := s.cfg.Inventory.Drills("", 50)
	if err != nil {
		return err
	}
	if !s.cfg.Ready() {
		return nil
	}
	known, err := s.box.sharedKeys(itemRow)
	if err != nil {
		return err
	}
	var pass []queued
	add := func(kind, key string, rec signable) error {
		rec.sign(s.creds.key, s.creds.TeamID, s.creds.Machine)
		body, err := json.Marshal(rec)
		pass = append(pass, queued{kind, key, body})
		return err
	}
	for _, r := range rows {
		rec, err := rowRecord(r)
		if err != nil {
			return err
		}
		delete(known, r.ID)
		if err := add(itemRow, r.ID, &rec); err != nil {
			return err
		}
	}
	for id := range known {
		gone := tombstone(id)
		if err := add(itemRow, id, &gone); err != nil {
			return err
		}
	}
	drills, err := s.box.sharedKeys(itemDrill)
	if err != nil {
		return err
	}
	for _, rep := range reports {
		if _, ok := drills[rep.ID]; ok || rep.Running {
			continue
		}
		d, err := drillRecord(rep)
		if err != nil {
			return err
		}
		if err := add(itemDrill, rep.ID, &d); err != nil {
			return err
		}
	}
	n, err := s.box.queueAll(pass, s.cfg.Now())
	if n > 0 {
		s.setStatus(func(st *Status) { st.Waiting = s.box.waiting() })
		s.send()
	}
	return err
}

// signable is a record the machine signs as it queues it.
type signable interface {
	sign(k *SigningKey, team, machine string)
}

// queue signs rec and adds it to the outbox unless it is what was queued
// last under the same key (Ed25519 signatures are deterministic, so the
// same record signed again is the same bytes).
func (s *Syncer) queue(kind, key string, rec signable) (bool, error) {
	rec.sign(s.creds.key, s.creds.TeamID, s.creds.Machine)
	body, err := json.Marshal(rec)
	if err != nil {
		return false, err
	}
	q, err := s.box.queue(kind, key, body, s.cfg.Now())
	if q {
		s.setStatus(func(st *Status) { st.Waiting = s.box.waiting() })
	}
	return q, err
}

// PublishCheckpoint queues a checkpoint of this machine's audit log (the
// keeper calls it for every checkpoint the log signs).
func (s *Syncer) PublishCheckpoint(cp audit.Checkpoint) {
	rec := checkpointRecord(cp)
	s.publishing(func() {
		if _, err := s.queue(itemCheckpoint, rec.key(), &rec); err != nil {
			s.log.Warn("team: a checkpoint could not be queued", "err", err)
			return
		}
		s.send()
	})
}

// PublishCosigned queues a checkpoint a witness cosigned, as the witness
// client hands it on (witness.Submitter's Cosigned): this is the seam
// between the witness and the team. Errors: a note that holds no
// checkpoint of a Yett audit log, or no cosignature.
func (s *Syncer) PublishCosigned(cosigned []byte) error {
	recs, err := cosignatureRecords(cosigned)
	if err != nil {
		return err
	}
	s.publishing(func() {
		for i := range recs {
			if _, e := s.queue(itemCosignature, recs[i].key(), &recs[i]); e != nil {
				err = fmt.Errorf("team: %w", e)
				return
			}
		}
		s.send()
	})
	return err
}
