package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Append rate with durability. "sync-each" fsyncs once per entry while
// holding the log; "group-commit" lets concurrent appenders share fsyncs.
// Compare entries/s between the two at the same parallelism.
func BenchmarkAppend(b *testing.B) {
	for _, tc := range []struct {
		name     string
		syncEach bool
		par      int
	}{
		{"sync-each/serial", true, 1},
		{"sync-each/16-writers", true, 16},
		{"group-commit/serial", false, 1},
		{"group-commit/16-writers", false, 16},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, _, err := Open(Options{Dir: filepath.Join(b.TempDir(), "audit"), Recipient: identity(b).Recipient(), SyncEach: tc.syncEach})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ev := sampleEvent(1)
			var wg sync.WaitGroup
			var next int64
			var mu sync.Mutex
			b.ResetTimer()
			start := time.Now()
			for range tc.par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						if next >= int64(b.N) {
							mu.Unlock()
							return
						}
						next++
						mu.Unlock()
						if _, err := l.Append(context.Background(), ev); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
			l.mu.Lock()
			b.ReportMetric(float64(b.N)/float64(l.syncs), "entries/fsync")
			l.mu.Unlock()
		})
	}
}

// benchEntries is the size of the verify benchmark log; the default keeps
// `go test -bench` quick, YETT_AUDIT_BENCH_ENTRIES=1000000 gives the figure
// quoted in docs/audit-format.md.
func benchEntries() int64 {
	if n, err := strconv.ParseInt(os.Getenv("YETT_AUDIT_BENCH_ENTRIES"), 10, 64); err == nil && n > 0 {
		return n
	}
	return 20000
}

// makeBenchLog writes a log of 1 KiB records in the writer's shape: a
// segment-key record, event records naming it (random bytes standing in for
// ciphertext, which verify never decrypts), and a signed checkpoint record
// ending every segment of 257 records; then the checkpoint file and the tree
// state a closing writer leaves.
func makeBenchLog(b *testing.B) (string, int64) {
	dir := b.TempDir()
	key, err := newSigningKey(dir)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, LogFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	payload := make([]byte, 1024-frameHeader-frameTrailer-bodyPrefix)
	var tree compactTree
	var off, seg, lastCP int64 = 0, -1, -1
	n := benchEntries()
	for i := int64(0); i < n; i++ {
		var rec []byte
		switch {
		case i%257 == 256 || i == n-1:
			cp, err := signCheckpoint(key.signer, key.vkey, key.id, Head{Size: i, Root: tree.root()})
			if err != nil {
				b.Fatal(err)
			}
			rec = newRecord(KindCheckpoint, key.id, i, len(cp.Text))
			copy(rec[frameHeader+bodyPrefix:], cp.Text)
			lastCP = i
		case i%257 == 0:
			rec = newRecord(KindSegmentKey, key.id, i, 300)
			p := rec[frameHeader+bodyPrefix:]
			rng.Read(p)
			copy(p, ageMagic)
			seg = i
		default:
			rec = newRecord(KindEvent, key.id, i, len(payload))
			p := rec[frameHeader+bodyPrefix:]
			rng.Read(p)
			p[0] = entryV2
			binary.BigEndian.PutUint64(p[1:], uint64(seg))
		}
		tree.push(finishRecord(rec))
		w.Write(rec)
		off += int64(len(rec))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	cp, err := signCheckpoint(key.signer, key.vkey, key.id, Head{Size: n, Root: tree.root()})
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, CheckpointFile), cp.Text, 0o644)
	if err := writeTreeState(dir, &treeState{logID: key.id, tree: tree, offset: off, lastCPRec: lastCP, segment: seg}); err != nil {
		b.Fatal(err)
	}
	return dir, off
}

// BenchmarkVerify measures Verify and, in the same run over the same file,
// plain SHA-256 of its bytes; "ratio" is verify speed / hashing speed
// (target >= 0.33).
func BenchmarkVerify(b *testing.B) {
	dir, size := makeBenchLog(b)
	path := filepath.Join(dir, LogFile)
	n := benchEntries()
	var hashTime, verifyTime time.Duration
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(size)
		start := time.Now()
		for range b.N {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			if _, err := io.Copy(h, bufio.NewReaderSize(f, 1<<20)); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		hashTime = time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(n)/hashTime.Seconds(), "entries/s")
	})
	b.Run("verify", func(b *testing.B) {
		b.SetBytes(size)
		start := time.Now()
		for range b.N {
			rep := Verify(path, VerifyOptions{})
			if rep.Status != StatusIntact || rep.Entries != n {
				b.Fatalf("%v %d: %v", rep.Status, rep.Entries, rep.Err)
			}
		}
		verifyTime = time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(n)/verifyTime.Seconds(), "entries/s")
		if hashTime > 0 {
			b.ReportMetric(hashTime.Seconds()/verifyTime.Seconds(), "ratio-to-sha256")
		}
	})
}

// nopSync stands in for the log file with writes but no fsync, so that the
// per-entry CPU cost of Append shows.
type nopSync struct{ f logFile }

func (n nopSync) Write(b []byte) (int, error) { return n.f.Write(b) }
func (n nopSync) Sync() error                 { return nil }

// BenchmarkAppendCPU: one Append without the fsync: sealing, framing,
// hashing and the allocations they make.
func BenchmarkAppendCPU(b *testing.B) {
	l, _, err := Open(Options{Dir: filepath.Join(b.TempDir(), "audit"), Recipient: identity(b).Recipient(),
		wrap: func(f logFile) logFile { return nopSync{f} }})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ev := sampleEvent(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen: opening a log of benchEntries() records for appending, as
// a writer closed it (checkpoint file and tree state), and closing it again
// (which stops the background verification).
func BenchmarkOpen(b *testing.B) {
	dir, _ := makeBenchLog(b)
	for b.Loop() {
		l, orep, err := Open(Options{Dir: dir, Recipient: identity(b).Recipient()})
		if err != nil || !orep.Background {
			b.Fatalf("open: background %v: %v", orep.Background, err)
		}
		l.Close()
	}
}

// BenchmarkOpenVerified: the same open with the whole log verified first
// (Options.VerifyBeforeOpen), which is what every Open did before the tree
// state: the baseline in the same run.
func BenchmarkOpenVerified(b *testing.B) {
	dir, _ := makeBenchLog(b)
	for b.Loop() {
		l, _, err := Open(Options{Dir: dir, Recipient: identity(b).Recipient(), VerifyBeforeOpen: true})
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}

// BenchmarkReadEvents: decrypting every entry of a log written by Append.
func BenchmarkReadEvents(b *testing.B) {
	const n = 2000
	dir := writeLog(b, n, 0)
	for b.Loop() {
		for _, err := range ReadEvents(filepath.Join(dir, LogFile), identity(b)) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkSeal: sealing one entry alone (under its segment key), the part
// of Append that was one X25519 key exchange per entry in format 1.
func BenchmarkSeal(b *testing.B) {
	ev := sampleEvent(1)
	seg := testSegment(b, 0)
	defer seg.wipe()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := sealedEntry(seg, LogID{}, 5, &ev); err != nil {
			b.Fatal(err)
		}
	}
}
