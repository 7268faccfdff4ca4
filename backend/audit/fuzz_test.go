package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/mod/sumdb/tlog"
)

// seedLog is a small real log used to seed the fuzzers.
func seedLog(f *testing.F) (log, cp []byte, export []byte) {
	dir := writeLog(f, 3, 2)
	var buf bytes.Buffer
	if _, _, err := Export(dir, &buf); err != nil {
		f.Fatal(err)
	}
	return mustRead(f, filepath.Join(dir, LogFile)), mustRead(f, filepath.Join(dir, CheckpointFile)), buf.Bytes()
}

// FuzzRecordDecoder feeds arbitrary bytes to the record reader and the whole
// verifier: no panic, no unbounded allocation, and a verdict every time.
func FuzzRecordDecoder(f *testing.F) {
	log, cp, _ := seedLog(f)
	f.Add(log, cp)
	f.Add(log[:len(log)-3], cp)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte(nil))
	f.Add(frame(encodeBody(KindEvent, LogID{}, 0, []byte("x"))), []byte(nil))
	f.Fuzz(func(t *testing.T, log, cp []byte) {
		rr := recordReader{r: bytes.NewReader(log)}
		for {
			rec, n, err := rr.next()
			if err != nil {
				break
			}
			if n < frameHeader+bodyPrefix+frameTrailer || len(rec.Body) > MaxBodySize {
				t.Fatalf("record of %d bytes accepted", n)
			}
		}
		rep := verifyStream(bytes.NewReader(log), int64(len(log)), cp, "", nil, Report{FirstBad: -1, FirstBadOffset: -1})
		if rep.Status == StatusTampered && rep.Err == nil {
			t.Fatal("tampered without a reason")
		}
	})
}

// FuzzCheckpoint parses arbitrary checkpoint texts; whatever parses must
// re-render to exactly the bytes given (there is one encoding).
func FuzzCheckpoint(f *testing.F) {
	_, cp, _ := seedLog(f)
	f.Add(cp)
	f.Add([]byte("yett.dev/audit/00\n1\nAA==\nvkey x\n\n— x AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCheckpoint(b)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(b, []byte(checkpointBody(c.LogID, c.Head, c.VerifierKey))) {
			t.Fatalf("parsed checkpoint does not re-render: %q", b)
		}
	})
}

// FuzzExport covers the proof decoder and the rest of the export parser.
func FuzzExport(f *testing.F) {
	_, _, exp := seedLog(f)
	f.Add(exp)
	f.Add([]byte(exportMagic + "vkey x\ncheckpoint 0\nproof 1 AAAA 2 AAAA 99999\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep := VerifyExport(bytes.NewReader(b), VerifyOptions{})
		if rep.Status == StatusIntact && !IsExport(b) {
			t.Fatal("non-export verified")
		}
		e, err := parseExport(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, p := range e.proofs {
			br := bufio.NewReader(strings.NewReader(formatProof(p)))
			line, _ := readLine(br)
			q, err := parseProof(br, line[len("proof "):])
			if err != nil || q.Old != p.Old || q.New != p.New || len(q.Hashes) != len(p.Hashes) {
				t.Fatalf("proof does not round-trip: %v", err)
			}
		}
	})
}

// FuzzProof feeds arbitrary proof sections to the proof decoder alone.
func FuzzProof(f *testing.F) {
	f.Add("proof 4 " + strings.Repeat("A", 43) + "= 9 " + strings.Repeat("B", 43) + "= 1\n" + strings.Repeat("C", 43) + "=\n")
	f.Add("proof 1 x 2 y 200\n")
	f.Fuzz(func(t *testing.T, s string) {
		br := bufio.NewReader(strings.NewReader(s))
		line, err := readLine(br)
		if err != nil {
			return
		}
		rest, ok := strings.CutPrefix(line, "proof ")
		if !ok {
			return
		}
		p, err := parseProof(br, rest)
		if err != nil {
			return
		}
		if len(p.Hashes) > 128 || p.Old.Size < 0 || p.New.Size < 0 {
			t.Fatalf("accepted %+v", p)
		}
		tlog.CheckTree(p.Hashes, p.New.Size, p.New.Root, p.Old.Size, p.Old.Root) // must not panic
	})
}

// FuzzSealedEvent opens arbitrary plaintexts sealed under a segment key, as
// a reader holding the identity would meet them: whatever opens is a
// well-formed event, and nothing panics.
func FuzzSealedEvent(f *testing.F) {
	f.Add([]byte(`{"type":"vault_locked","time":"2026-07-22T14:20:11Z"}`))
	f.Add([]byte(`{"run":{"pid":"x"}}`))
	f.Add([]byte(`{"v":1,"log":"00000000000000000000000000000000","index":0,"event":{"type":"vault_locked"}}`))
	f.Fuzz(func(t *testing.T, pt []byte) {
		if len(pt) > 64<<10 {
			return
		}
		seg := testSegment(t, 3)
		defer seg.wipe()
		rec := newRecord(KindEvent, LogID{}, 4, entryOverhead+len(pt))
		p := rec[frameHeader+bodyPrefix:]
		p[0] = entryV2
		binary.BigEndian.PutUint64(p[1:], 3)
		nonce := p[entryHeader : entryHeader+chacha20poly1305.NonceSizeX]
		seg.aead.Seal(p[entryHeader+len(nonce):][:0], nonce, pt, rec[frameHeader:frameHeader+entryAD])
		finishRecord(rec)
		r := parseRecord(t, rec)
		if _, err := openEntry(r, seg); err == nil {
			var e Event
			if json.Unmarshal(pt, &e) != nil {
				t.Fatalf("opened a payload that is not an event: %q", pt)
			}
		}
	})
}

// FuzzReadEvents reads arbitrary log bytes with the test identity: every
// parser a reader holding the key runs (framing, segment keys, format 1 and
// 2 entries, positions) meets untrusted bytes here. No panic, and a record
// that decrypts is one a writer sealed.
func FuzzReadEvents(f *testing.F) {
	log, _, _ := seedLog(f)
	f.Add(log, int64(0), int64(0), int64(-1), int64(0))
	f.Add(log[:len(log)-3], int64(0), int64(0), int64(-1), int64(0))
	f.Add(mustRead(f, filepath.Join(vectorsDir, "v1", LogFile)), int64(0), int64(0), int64(-1), int64(0))
	id := identity(f)
	f.Fuzz(func(t *testing.T, log []byte, idx, off, seg, segOff int64) {
		path := filepath.Join(t.TempDir(), LogFile)
		if err := os.WriteFile(path, log, 0o600); err != nil {
			t.Fatal(err)
		}
		from := Position{Index: idx, Offset: off, Segment: seg, SegmentOffset: segOff}
		n := 0
		for e, err := range ReadEventsFrom(path, id, from) {
			if err != nil {
				break
			}
			if e.Next.Index <= e.Index || e.Next.Offset > int64(len(log)) {
				t.Fatalf("entry %d: next position %+v", e.Index, e.Next)
			}
			if n++; n > len(log) {
				t.Fatal("more entries than bytes")
			}
		}
	})
}
