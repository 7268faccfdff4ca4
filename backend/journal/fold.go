package journal

import (
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"
)

// foldThreshold is the log size past which a fold also rewrites the log
// with only what is still live.
const foldThreshold = 1 << 20

// final reports whether e will change no more in this process: a result,
// or a call refused after it was recorded.
func final(e *Entry) bool { return e.State == StateResult || e.State == StateNotDispatched }

// foldAt is how many calls become final before a fold runs ahead of its
// tick: under 16 agents a second held about 2,000 of them, a megabyte of
// the gateway's live heap, which the collector's goal doubles.
const foldAt = 256

// folder folds final calls into the database every foldEvery, or once
// foldAt calls became final, until Close.
func (j *Journal) folder() {
	defer close(j.done)
	t := time.NewTicker(j.foldEvery)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-j.foldNow:
		case <-t.C:
		}
		if err := j.fold(false); err != nil {
			j.log.Error("journal: folding calls into the database failed; they stay in the log", "err", err)
		}
	}
}

// fold writes the final calls the log holds into the database in one
// transaction (synchronous=FULL: durable when it commits), then forgets
// them in memory, and, once the log is large, rewrites it with what is
// still live. With all (at Open) it folds every call the log holds: they
// are all from an earlier process, so none of them will change again; a
// call left dispatched then reads STATUS_UNKNOWN from the database.
func (j *Journal) fold(all bool) error {
	j.mu.Lock()
	if !j.dirty && !all && j.wal.sizeNow() < foldThreshold {
		// Nothing to fold, and the log is small: carried audit records grow
		// it with no call becoming final, so its size is checked too.
		j.mu.Unlock()
		return nil
	}
	j.dirty, j.finals = false, 0
	var batch []Entry
	durable := j.wal.durableSeq()
	for _, e := range j.live {
		// A final state whose record is not durable yet (FinishSoon) waits
		// for the next fold: were it archived now, a crash before its record
		// is durable would replay the older, dispatched record over it.
		if all || final(e) && j.seqOf[e.ID] <= durable {
			batch = append(batch, *e)
		} else if final(e) {
			j.dirty = true
			j.finals++
		}
	}
	j.mu.Unlock()
	if err := j.archive(batch); err != nil {
		j.mu.Lock()
		j.dirty = true
		j.mu.Unlock()
		return err
	}
	// The next log's room is made before the lock the calls take.
	var next *os.File
	if all || j.wal.sizeNow() >= foldThreshold {
		var err error
		if next, err = j.wal.newLogFile(); err != nil {
			return err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range batch {
		k := callKey{e.Scope, e.Key}
		if cur := j.live[k]; cur != nil && cur.ID == e.ID && cur.State == e.State && cur.UpdatedAt.Equal(e.UpdatedAt) {
			delete(j.live, k)
			delete(j.byID, e.ID)
			delete(j.seqOf, e.ID)
		}
		if j.keys != nil {
			j.keys.add(k)
		} else {
			j.seen = append(j.seen, k)
		}
	}
	if next == nil {
		// Under the threshold (the log only grows between rewrites), or
		// past it only since the check above: the next fold rewrites it.
		return nil
	}
	// The snapshot and the rewrite happen under j.mu, which every append
	// takes: no record can land in the old log after the snapshot and be
	// lost with it.
	rest := make([]*Entry, 0, len(j.live))
	for _, e := range j.live {
		rest = append(rest, e)
	}
	return j.wal.rewrite(rest, next)
}

// archive writes entries to the database, a few rows per statement: enough
// to parse one statement for several calls, few enough that the driver's
// binding (which matches every parameter against every argument) stays
// cheap.
func (j *Journal) archive(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	tx, err := j.sqlDB.Begin()
	if err != nil {
		return fmt.Errorf("journal: fold: %w", err)
	}
	const per = 8
	const tuple = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for len(entries) > 0 {
		n := min(per, len(entries))
		args := make([]any, 0, n*20)
		for _, e := range entries[:n] {
			args = append(args, e.ID, e.Scope, e.Key, string(e.State), e.BootID, e.RunID, e.Method, e.Target, e.Path,
				e.CredentialRef, e.RequestBytes, e.RequestSHA256, e.Reason, e.Result.Status, e.Result.Class,
				e.Result.ResponseBytes, e.Result.ResponseSHA256, e.Result.Truncated, e.CreatedAt.UnixNano(), e.UpdatedAt.UnixNano())
		}
		// A key reused after a call that never left replaces that call's
		// row (UNIQUE scope, idem_key), as it replaced it in the log.
		q := `INSERT OR REPLACE INTO journal_calls (` + callColumns + `) VALUES ` + strings.TrimSuffix(strings.Repeat(tuple+",", n), ",")
		if _, err := tx.Exec(q, args...); err != nil {
			tx.Rollback()
			return fmt.Errorf("journal: fold: %w", err)
		}
		entries = entries[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("journal: fold: %w", err)
	}
	return nil
}

// buildBloom reads every (scope, key) of the database into a Bloom filter,
// so that a new key, the usual case, is known to be new without a query.
// Until it is built, Dispatch asks the database.
func (j *Journal) buildBloom() {
	var rows int
	if err := j.sqlDB.QueryRow(`SELECT count(*) FROM journal_calls`).Scan(&rows); err != nil {
		j.log.Warn("journal: counting calls for the key filter failed; keys are checked in the database", "err", err)
		return
	}
	b := newBloom(rows)
	rs, err := j.sqlDB.Query(`SELECT scope, idem_key FROM journal_calls`)
	if err != nil {
		j.log.Warn("journal: reading keys for the key filter failed; keys are checked in the database", "err", err)
		return
	}
	for rs.Next() {
		var k callKey
		if err := rs.Scan(&k.scope, &k.key); err != nil {
			rs.Close()
			return
		}
		b.add(k)
	}
	if rs.Close() != nil || rs.Err() != nil {
		return
	}
	j.mu.Lock()
	for _, k := range j.seen {
		b.add(k)
	}
	j.seen = nil
	j.keys = b
	j.mu.Unlock()
}

// bloom is a Bloom filter over call keys: no false negatives, about 1%
// false positives at its planned size (10 bits and 7 probes per key).
type bloom struct {
	bits []uint64
	m    uint64
}

func newBloom(n int) *bloom {
	m := uint64(max(2*n, 1<<16) * 10)
	return &bloom{bits: make([]uint64, (m+63)/64), m: m}
}

func (b *bloom) probes(k callKey) (uint64, uint64) {
	h := fnv.New64a()
	h.Write([]byte(k.scope))
	h.Write([]byte{0})
	h.Write([]byte(k.key))
	s := h.Sum64()
	return s, s>>33 | s<<31 | 1
}

func (b *bloom) add(k callKey) {
	h1, h2 := b.probes(k)
	for i := range uint64(7) {
		x := (h1 + i*h2) % b.m
		b.bits[x/64] |= 1 << (x % 64)
	}
}

func (b *bloom) maybe(k callKey) bool {
	h1, h2 := b.probes(k)
	for i := range uint64(7) {
		x := (h1 + i*h2) % b.m
		if b.bits[x/64]&(1<<(x%64)) == 0 {
			return false
		}
	}
	return true
}
