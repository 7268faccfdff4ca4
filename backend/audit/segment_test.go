package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"filippo.io/age"
)

// kinds returns the record kinds of the log in dir, in order.
func kinds(t *testing.T, dir string) string {
	t.Helper()
	var out []byte
	for _, s := range spans(t, mustRead(t, filepath.Join(dir, LogFile))) {
		out = append(out, s.kind)
	}
	return string(out)
}

// Segments end at every checkpoint (automatic, explicit, at Close) and a new
// writer starts a new one; each starts with its key record, lazily, at the
// first append after the end.
func TestSegmentsRotate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 4)
	ctx := context.Background()
	appendN := func(n int) {
		t.Helper()
		for i := range n {
			if _, err := l.Append(ctx, sampleEvent(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(5)                                // K E E E C(auto) K E E
	if _, err := l.Checkpoint(); err != nil { // the vault locks
		t.Fatal(err)
	}
	appendN(1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, 4)
	appendN(1)
	l.Close()
	if got, want := kinds(t, dir), "KEEEC"+"KEEC"+"KEC"+"KEC"; got != want {
		t.Fatalf("records %s, want %s", got, want)
	}
	// An explicit checkpoint with nothing after the last one starts no
	// segment, and neither does an Open and Close without appends.
	l = openLog(t, dir, 4)
	l.Checkpoint()
	l.Close()
	if got := kinds(t, dir); got != "KEEECKEECKECKECC" {
		t.Fatalf("records %s", got)
	}
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
}

// The key of an ended segment is gone from the writer: the segment key it
// held no longer opens the entries sealed under it. This is what keeps a
// process that reads the writer's memory after a vault lock (the gateway
// checkpoints at every lock) from reading what was written before.
func TestSegmentKeyWipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openLog(t, dir, 100)
	if _, err := l.Append(context.Background(), sampleEvent(1)); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	held := l.seg.key
	l.mu.Unlock()
	log := mustRead(t, filepath.Join(dir, LogFile))
	entry := parseRecord(t, log[spans(t, log)[1].off:])
	if _, err := openEntry(entry, held); err != nil {
		t.Fatalf("self-check: the live segment key does not open its entry: %v", err)
	}
	if _, err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	seg := l.seg
	l.mu.Unlock()
	if seg != nil {
		t.Fatal("a segment outlived the checkpoint")
	}
	if held.aead != nil {
		t.Fatal("the ended segment still holds its AEAD")
	}
	// The AEAD the writer used is zeroed, not just dropped: re-using the
	// very object fails to open what it sealed.
	l.Close()

	k := testSegment(t, 0)
	aead := k.aead
	nonce := make([]byte, 24)
	ct := aead.Seal(nil, nonce, []byte("entry"), nil)
	k.wipe()
	if _, err := aead.Open(nil, nonce, ct, nil); err == nil {
		t.Fatal("a wiped segment key still opens its entries")
	}
	if _, err := testSegment(t, 0).aead.Open(nil, nonce, ct, nil); err != nil {
		t.Fatal("self-check: the same key does not open it")
	}
}

// orderFile records the order of writes (by record kind) and syncs.
type orderFile struct {
	f   logFile
	mu  sync.Mutex
	ops []string
}

func (o *orderFile) Write(b []byte) (int, error) {
	o.mu.Lock()
	o.ops = append(o.ops, string(b[frameHeader]))
	o.mu.Unlock()
	return o.f.Write(b)
}

func (o *orderFile) Sync() error {
	o.mu.Lock()
	o.ops = append(o.ops, "sync")
	o.mu.Unlock()
	return o.f.Sync()
}

// A segment's key record is durable before any entry sealed under it is
// written, also under concurrent appenders (group commit).
func TestSegmentKeyDurableFirst(t *testing.T) {
	of := &orderFile{}
	l, _, err := Open(Options{Dir: filepath.Join(t.TempDir(), "audit"), Recipient: identity(t).Recipient(),
		CheckpointEvery: 5, wrap: func(f logFile) logFile { of.f = f; return of }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if _, err := l.Append(context.Background(), sampleEvent(w*10+i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	segments := 0
	for i, op := range of.ops {
		if op != "K" {
			continue
		}
		segments++
		if i+1 >= len(of.ops) || of.ops[i+1] != "sync" {
			t.Fatalf("segment key record not followed by its fsync: %v", of.ops[i:min(i+4, len(of.ops))])
		}
	}
	// Appenders holding tickets when the threshold is reached land in the
	// segment too, so segments may be longer than 4 entries, never unbounded.
	if segments < 80/(5+8) {
		t.Fatalf("%d segments for 80 entries with a checkpoint every 5 records", segments)
	}
}

// Reading costs one X25519 unwrap per segment, not per entry.
func TestReadUnwrapsOncePerSegment(t *testing.T) {
	dir := writeLog(t, 40, 10)
	ci := &countingIdentity{id: identity(t)}
	n := 0
	for _, err := range ReadEvents(filepath.Join(dir, LogFile), ci) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if segs := int64(bytes.Count([]byte(kinds(t, dir)), []byte("K"))); n != 40 || ci.unwraps != segs {
		t.Fatalf("%d entries, %d unwraps for %d segments", n, ci.unwraps, segs)
	}
}

type countingIdentity struct {
	id      age.Identity
	unwraps int64
}

func (c *countingIdentity) Unwrap(s []*age.Stanza) ([]byte, error) {
	c.unwraps++
	return c.id.Unwrap(s)
}

// Resuming at any entry's Next position yields exactly the entries after it;
// a position that does not fit the log is refused, never misread.
func TestReadEventsFrom(t *testing.T) {
	dir := writeLog(t, 12, 4)
	path := filepath.Join(dir, LogFile)
	var all []Entry
	for e, err := range ReadEvents(path, identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	for k, e := range all {
		var rest []Entry
		for r, err := range ReadEventsFrom(path, identity(t), e.Next) {
			if err != nil {
				t.Fatalf("from entry %d: %v", e.Index, err)
			}
			rest = append(rest, r)
		}
		if len(rest) != len(all)-k-1 || (len(rest) > 0 && !reflect.DeepEqual(rest, all[k+1:])) {
			t.Fatalf("from entry %d: %d entries, want %d", e.Index, len(rest), len(all)-k-1)
		}
	}
	good := all[5].Next
	for name, p := range map[string]Position{
		"offset inside a record":  {Index: good.Index, Offset: good.Offset + 3, Segment: good.Segment, SegmentOffset: good.SegmentOffset},
		"index off by one":        {Index: good.Index + 1, Offset: good.Offset, Segment: good.Segment, SegmentOffset: good.SegmentOffset},
		"segment not a key":       {Index: good.Index, Offset: good.Offset, Segment: good.Segment + 1, SegmentOffset: good.SegmentOffset},
		"segment offset wrong":    {Index: good.Index, Offset: good.Offset, Segment: good.Segment, SegmentOffset: good.SegmentOffset + 1},
		"segment after the index": {Index: good.Index, Offset: good.Offset, Segment: good.Index, SegmentOffset: good.Offset},
		"negative":                {Index: -1},
	} {
		for _, err := range ReadEventsFrom(path, identity(t), p) {
			if !errors.Is(err, ErrBadPosition) {
				t.Errorf("%s: %v", name, err)
			}
			break
		}
	}
}

// A log written by format 1 (an age file per entry) is continued by the
// format-2 writer: the old entries stay as they are and everything still
// verifies and reads.
func TestFormat1LogContinued(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	src := filepath.Join(vectorsDir, "v1")
	copyFiles(t, src, dir, LogFile, CheckpointFile, VerifierKeyFile)
	skey, _ := fixedSigningKey(t)
	writeFile(t, filepath.Join(dir, SigningKeyFile), skey+"\n")
	l := openLog(t, dir, 4)
	if _, err := l.Append(context.Background(), sampleEvent(7)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{}); rep.Status != StatusIntact {
		t.Fatal(rep.Err)
	}
	var got []Event
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Event)
	}
	want := append([]Event{sampleEvent(0), sampleEvent(1), sampleEvent(2), sampleEvent(3), sampleEvent(4)}, sampleEvent(7))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	if k := kinds(t, dir); !slices.Contains([]byte(k), KindSegmentKey) {
		t.Fatalf("records %s", k)
	}
}

// A format-1 entry after a segment key is not something any writer makes.
func TestFormat1AfterSegmentIsRefused(t *testing.T) {
	v1 := readFiles(t, filepath.Join(vectorsDir, "v1"))
	v1Entry := parseRecord(t, v1.log).Payload
	dir := writeLog(t, 2, 10)
	f := readFiles(t, dir)
	sp := spans(t, f.log)
	// Replace entry 1 (after the key record at 0) with a format-1 payload.
	rec := frame(encodeBody(KindEvent, parseRecord(t, f.log).LogID, 1, v1Entry))
	f.log = slices.Concat(f.log[:sp[1].off], rec, f.log[sp[1].off+sp[1].n:])
	wantTampered(t, f.verify(nil), 1, ErrBadSegment)
}

func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		writeFile(t, filepath.Join(to, n), string(mustRead(t, filepath.Join(from, n))))
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
