//go:build linux

package audit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// memCarrier is a Carrier that keeps its copies in memory: every copy is
// durable at once, and it drops them only when asked through its sync.
type memCarrier struct {
	mu     sync.Mutex
	copies []Carried
	sync   func() error
	waits  int
}

func (c *memCarrier) Carry(log [16]byte, off int64, rec []byte) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.copies = append(c.copies, Carried{Log: LogID(log), Offset: off, Record: append([]byte(nil), rec...)})
	return uint64(len(c.copies)), nil
}

func (c *memCarrier) WaitCarried(uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits++
	return nil
}

func (c *memCarrier) CarrySync(sync func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync = sync
}

// drop is what the journal does at a rewrite: the log's sync, then the
// copies go.
func (c *memCarrier) drop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sync == nil {
		return errors.New("nobody attached")
	}
	if err := c.sync(); err != nil {
		return err
	}
	c.copies = nil
	return nil
}

func carriedEvent(i int) Event {
	return Event{Type: EventGatewayStarted, Time: time.Unix(int64(1700000000+i), 0).UTC(), BootID: "carried"}
}

// TestCarriedAppendsWaitForTheCarrier: while carried, an Append waits for
// the carrier and never fsyncs the file; the file is fsynced when carrying
// starts and stops, and at a checkpoint; stopping tells the carrier it may
// drop its copies.
func TestCarriedAppendsWaitForTheCarrier(t *testing.T) {
	dir := t.TempDir()
	l, _, err := Open(Options{Dir: dir, Recipient: mustIdentity().Recipient(), CheckpointAfter: -1, Carried: func() ([]Carried, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &memCarrier{}
	before := l.Syncs()
	if err := l.CarryBy(c); err != nil {
		t.Fatal(err)
	}
	if l.Syncs() != before+1 || c.sync == nil {
		t.Fatalf("attaching: %d own fsyncs, sync given %v", l.Syncs()-before, c.sync != nil)
	}
	ctx := context.Background()
	before = l.Syncs()
	for i := range 5 {
		if _, err := l.Append(ctx, carriedEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	if l.Syncs() != before || c.waits < 5 || len(c.copies) != 6 { // 5 entries and the segment's key record
		t.Fatalf("carried appends: %d own fsyncs, %d waits, %d copies", l.Syncs()-before, c.waits, len(c.copies))
	}
	if err := c.drop(); err != nil || l.Syncs() != before+1 {
		t.Fatalf("the carrier's drop: %v, %d own fsyncs", err, l.Syncs()-before)
	}
	before = l.Syncs()
	if _, err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := l.Syncs() - before; n != 2 {
		t.Fatalf("a carried checkpoint made %d fsyncs of the file, want 2 (before the checkpoint file, after its record)", n)
	}
	if err := l.CarryBy(nil); err != nil || c.sync != nil {
		t.Fatalf("detaching: %v, sync still set %v", err, c.sync != nil)
	}
	// The checkpoint ended the segment: the first append starts one.
	if _, err := l.Append(ctx, carriedEvent(8)); err != nil {
		t.Fatal(err)
	}
	before = l.Syncs()
	if _, err := l.Append(ctx, carriedEvent(9)); err != nil || l.Syncs() != before+1 {
		t.Fatalf("after detaching, an append: %v, %d own fsyncs, want 1", err, l.Syncs()-before)
	}
}

// TestCarrierSyncFailureSticks: when the fsync the carrier asks for fails,
// the carrier keeps its copies (the sync keeps failing, even once the disk
// answers again) and the log refuses every later append.
func TestCarrierSyncFailureSticks(t *testing.T) {
	dir := t.TempDir()
	ff := &failingFile{}
	l, _, err := Open(Options{Dir: dir, Recipient: mustIdentity().Recipient(), CheckpointAfter: -1,
		Carried: func() ([]Carried, error) { return nil, nil }, wrap: func(f logFile) logFile { ff.f = f; return ff }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &memCarrier{}
	if err := l.CarryBy(c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Append(ctx, carriedEvent(1)); err != nil {
		t.Fatal(err)
	}
	ff.failSync = true
	if err := c.drop(); !errors.Is(err, errInjected) {
		t.Fatalf("drop with a failing fsync: %v", err)
	}
	ff.failSync = false
	if err := c.drop(); !errors.Is(err, errInjected) || len(c.copies) == 0 {
		t.Fatalf("a later drop: %v with %d copies left; the failure must stick", err, len(c.copies))
	}
	if _, err := l.Append(ctx, carriedEvent(2)); !errors.Is(err, ErrBroken) {
		t.Fatalf("append after the carrier's fsync failed: %v, want ErrBroken", err)
	}
}

// TestRestoreLeavesWhatTheFileHolds: a copy whose bytes the file holds is
// never written over (verification judges them); a copy past a hole makes
// Open fail and leaves the file as found.
func TestRestoreLeavesWhatTheFileHolds(t *testing.T) {
	dir := t.TempDir()
	id := mustIdentity()
	l, _, err := Open(Options{Dir: dir, Recipient: id.Recipient(), CheckpointAfter: -1, Carried: func() ([]Carried, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	c := &memCarrier{}
	if err := l.CarryBy(c); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(context.Background(), carriedEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	logID := l.key.id
	end := l.end
	l.Close()
	// A copy that differs from what the file holds at its offset.
	forged := Carried{Log: logID, Offset: c.copies[1].Offset, Record: make([]byte, len(c.copies[1].Record))}
	l2, rep, err := Open(Options{Dir: dir, Recipient: id.Recipient(), CheckpointAfter: -1, Carried: func() ([]Carried, error) { return []Carried{forged}, nil }})
	if err != nil || rep.Restored != 0 {
		t.Fatalf("open with a copy the file holds other bytes for: %v, %d restored", err, rep.Restored)
	}
	size := l2.end
	l2.Close()
	if size < end {
		t.Fatalf("the log shrank from %d to %d", end, size)
	}
	hole := Carried{Log: logID, Offset: size + 100, Record: []byte("x")}
	if _, _, err := Open(Options{Dir: dir, Recipient: id.Recipient(), Carried: func() ([]Carried, error) { return []Carried{hole}, nil }}); err == nil {
		t.Fatal("a copy past a hole in the file was accepted")
	}
}
