package audit

import (
	"bufio"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
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

// makeBenchLog writes a log of 1 KiB records (random payloads standing in for
// ciphertext, which verify never decrypts) with a signed checkpoint record
// every 256 records and a final checkpoint file, the shape the writer makes.
func makeBenchLog(b *testing.B) (string, int64) {
	dir := b.TempDir()
	{
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
		n := benchEntries()
		for i := int64(0); i < n; i++ {
			var body []byte
			if i%257 == 256 {
				cp, err := signCheckpoint(key.signer, key.vkey, key.id, Head{Size: i, Root: tree.root()})
				if err != nil {
					b.Fatal(err)
				}
				body = encodeBody(KindCheckpoint, key.id, i, cp.Text)
			} else {
				rng.Read(payload)
				body = encodeBody(KindEvent, key.id, i, payload)
			}
			w.Write(frame(body))
			tree.push(tlog.RecordHash(body))
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
	}
	fi, err := os.Stat(filepath.Join(dir, LogFile))
	if err != nil {
		b.Fatal(err)
	}
	return dir, fi.Size()
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
