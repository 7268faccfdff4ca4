package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// span is one record's place in a log file.
type span struct {
	off, n int64
	kind   byte
}

func spans(t testing.TB, b []byte) []span {
	t.Helper()
	rr := recordReader{r: bytes.NewReader(b)}
	var out []span
	var off int64
	for {
		rec, n, err := rr.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("spans: %v", err)
		}
		out = append(out, span{off, int64(n), rec.Kind})
		off += int64(n)
	}
}

// logFiles is a log directory's contents in memory.
type logFiles struct {
	log, cp []byte
	vkey    string
}

func readFiles(t testing.TB, dir string) logFiles {
	vkey, err := ReadVerifierKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	return logFiles{log: mustRead(t, filepath.Join(dir, LogFile)), cp: mustRead(t, filepath.Join(dir, CheckpointFile)), vkey: vkey}
}

func (f logFiles) verify(held []byte) Report {
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	return verifyStream(bytes.NewReader(f.log), int64(len(f.log)), f.cp, f.vkey, held, rep).Report
}

func (f logFiles) record(s span) []byte { return f.log[s.off : s.off+s.n] }

// refix recomputes both checksums of the record at s, as an attacker who
// knows the format would.
func refix(b []byte, s span) {
	r := b[s.off : s.off+s.n]
	body := r[frameHeader : len(r)-frameTrailer]
	binary.BigEndian.PutUint32(r[4:], crc32.Checksum(r[:4], castagnoli))
	binary.BigEndian.PutUint32(r[len(r)-frameTrailer:], crc32.Checksum(body, castagnoli))
}

func without(b []byte, s span) []byte {
	return slices.Concat(b[:s.off], b[s.off+s.n:])
}

func wantTampered(t *testing.T, rep Report, first int64, target error) {
	t.Helper()
	if rep.Status != StatusTampered {
		t.Fatalf("status %v (%v), want tampered", rep.Status, rep.Err)
	}
	if rep.FirstBad != first {
		t.Fatalf("first bad %d, want %d (%v)", rep.FirstBad, first, rep.Err)
	}
	if target != nil && !errors.Is(rep.Err, target) {
		t.Fatalf("err %v, want %v", rep.Err, target)
	}
}

func TestTamperEveryBit(t *testing.T) {
	dir := writeLog(t, 3, 3) // K E E C K E C: every kind, two segments, a checkpoint record inside
	orig := readFiles(t, dir)
	if rep := orig.verify(nil); rep.Status != StatusIntact {
		t.Fatalf("pristine log: %v", rep.Err)
	}
	sp := spans(t, orig.log)
	for ri, s := range sp {
		for bit := s.off * 8; bit < (s.off+s.n)*8; bit++ {
			f := orig
			f.log = slices.Clone(orig.log)
			f.log[bit/8] ^= 1 << (bit % 8)
			rep := f.verify(nil)
			if rep.Status != StatusTampered || rep.FirstBad != int64(ri) {
				t.Fatalf("bit %d (record %d): status %v first bad %d: %v", bit, ri, rep.Status, rep.FirstBad, rep.Err)
			}
		}
	}
	for bit := 0; bit < len(orig.cp)*8; bit++ {
		f := orig
		f.cp = slices.Clone(orig.cp)
		f.cp[bit/8] ^= 1 << (bit % 8)
		if rep := f.verify(nil); rep.Status != StatusTampered {
			t.Fatalf("checkpoint bit %d: status %v", bit, rep.Status)
		}
	}
}

// An attacker who recomputes the checksums is caught by the record header
// (index, log ID, kind, and an entry's version and segment, a segment key's
// age header) at the exact record, or by the next signed checkpoint, which
// names the range the altered entry is in.
func TestTamperEveryBitChecksumsFixed(t *testing.T) {
	dir := writeLog(t, 3, 3) // K E E C K E C: every kind, two segments, a checkpoint record inside
	orig := readFiles(t, dir)
	sp := spans(t, orig.log)
	for ri, s := range sp {
		for bit := (s.off + frameHeader) * 8; bit < (s.off+s.n-frameTrailer)*8; bit++ {
			f := orig
			f.log = slices.Clone(orig.log)
			f.log[bit/8] ^= 1 << (bit % 8)
			refix(f.log, s)
			rep := f.verify(nil)
			if rep.Status != StatusTampered {
				t.Fatalf("bit %d (record %d): status %v", bit, ri, rep.Status)
			}
			inHeader := bit < (s.off+frameHeader+bodyPrefix+structural(s.kind))*8
			if inHeader || s.kind == KindCheckpoint {
				if rep.FirstBad != int64(ri) {
					t.Fatalf("bit %d (record %d header): first bad %d: %v", bit, ri, rep.FirstBad, rep.Err)
				}
				continue
			}
			if !errors.Is(rep.Err, ErrCheckpointMismatch) || rep.FirstBad > int64(ri) {
				t.Fatalf("bit %d (record %d payload): first bad %d: %v", bit, ri, rep.FirstBad, rep.Err)
			}
		}
	}
}

// structural is how many payload bytes of a record of kind the verifier
// checks without any key: an entry's version and segment, the age header
// line a segment key starts with.
func structural(kind byte) int64 {
	switch kind {
	case KindEvent:
		return entryHeader
	case KindSegmentKey:
		return int64(len(ageMagic))
	}
	return 0
}

func TestTamperStructural(t *testing.T) {
	dir := writeLog(t, 9, 4)
	orig := readFiles(t, dir)
	sp := spans(t, orig.log)
	last := len(sp) - 1
	other := readFiles(t, writeLog(t, 9, 4))
	osp := spans(t, other.log)

	t.Run("delete", func(t *testing.T) {
		for k, s := range sp {
			f := orig
			f.log = without(orig.log, s)
			want := int64(k)
			if k == last {
				wantTampered(t, f.verify(nil), want, ErrTruncated)
				continue
			}
			wantTampered(t, f.verify(nil), want, ErrWrongIndex)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		for k, s := range sp {
			f := orig
			f.log = slices.Concat(orig.log[:s.off+s.n], f.record(s), orig.log[s.off+s.n:])
			wantTampered(t, f.verify(nil), int64(k+1), ErrWrongIndex)
		}
	})
	t.Run("reorder", func(t *testing.T) {
		for k := 0; k < last; k++ {
			a, b := sp[k], sp[k+1]
			f := orig
			f.log = slices.Concat(orig.log[:a.off], f.record(b), f.record(a), orig.log[b.off+b.n:])
			wantTampered(t, f.verify(nil), int64(k), ErrWrongIndex)
		}
	})
	t.Run("splice from another installation", func(t *testing.T) {
		for k, s := range sp {
			f := orig
			f.log = slices.Concat(orig.log[:s.off], other.record(osp[k]), orig.log[s.off+s.n:])
			wantTampered(t, f.verify(nil), int64(k), ErrForeignRecord)
		}
	})
	t.Run("splice with log ID rewritten", func(t *testing.T) {
		// The foreign ciphertext carries our log ID and index now; only the
		// signed checkpoints can tell.
		k := 1
		rec := slices.Clone(other.record(osp[k]))
		copy(rec[frameHeader+1:], orig.record(sp[k])[frameHeader+1:frameHeader+bodyPrefix])
		refix(rec, span{0, int64(len(rec)), KindEvent})
		f := orig
		f.log = slices.Concat(orig.log[:sp[k].off], rec, orig.log[sp[k].off+sp[k].n:])
		wantTampered(t, f.verify(nil), 0, ErrCheckpointMismatch)
	})
	t.Run("truncate at record boundary", func(t *testing.T) {
		for k := 1; k < len(sp); k++ {
			f := orig
			f.log = orig.log[:sp[k].off]
			wantTampered(t, f.verify(nil), int64(k), ErrTruncated)
			wantTampered(t, f.verify(orig.cp), int64(k), ErrTruncated)
		}
	})
	t.Run("truncate mid record", func(t *testing.T) {
		f := orig
		f.log = orig.log[:sp[3].off+5]
		rep := f.verify(nil)
		wantTampered(t, rep, 3, ErrTruncated)
	})
	t.Run("replace checkpoint with older one", func(t *testing.T) {
		// The first checkpoint the writer stored is inside the log as record 4.
		f := orig
		f.cp = parseRecord(t, orig.record(sp[4])).Payload
		wantTampered(t, f.verify(nil), -1, ErrStaleCheckpoint)
	})
	t.Run("truncate and roll back checkpoint", func(t *testing.T) {
		// Cut the log right after in-log checkpoint record 4 and put that
		// checkpoint back as the file. Nothing local contradicts this.
		f := orig
		cpRec := parseRecord(t, orig.record(sp[4]))
		f.log = orig.log[:sp[4].off]
		f.cp = cpRec.Payload
		rep := f.verify(nil)
		if rep.Status != StatusIntact {
			t.Fatalf("status %v: %v", rep.Status, rep.Err)
		}
		if !slices.Contains(rep.Notes, NoHeldCheckpointNote) {
			t.Fatalf("notes %q lack the caveat", rep.Notes)
		}
		// A checkpoint kept elsewhere catches it, with both heads.
		rep = f.verify(orig.cp)
		wantTampered(t, rep, 4, ErrTruncated)
		if !strings.Contains(rep.Err.Error(), orig.verify(nil).Head.String()) || !strings.Contains(rep.Err.Error(), rep.Head.String()) {
			t.Fatalf("error does not name both heads: %v", rep.Err)
		}
	})
	t.Run("full rewrite with a new key", func(t *testing.T) {
		// Someone without our signing key replaces log, checkpoint and
		// verifier key with a log of their own.
		rep := other.verify(nil)
		if rep.Status != StatusIntact || !slices.Contains(rep.Notes, NoHeldCheckpointNote) {
			t.Fatalf("status %v notes %q", rep.Status, rep.Notes)
		}
		wantTampered(t, other.verify(orig.cp), -1, ErrRewritten)
		// Keeping our verifier key file exposes it at once.
		f := other
		f.vkey = orig.vkey
		wantTampered(t, f.verify(nil), 0, ErrForeignRecord)
	})
	t.Run("held checkpoint extended", func(t *testing.T) {
		f := orig
		f.log = orig.log[:sp[5].off]
		f.cp = parseRecord(t, orig.record(sp[4])).Payload
		held := f.cp
		rep := orig.verify(held)
		if rep.Status != StatusIntact || !rep.HeldOK {
			t.Fatalf("status %v held ok %v: %v", rep.Status, rep.HeldOK, rep.Err)
		}
		if slices.Contains(rep.Notes, NoHeldCheckpointNote) {
			t.Fatal("caveat printed although a checkpoint was held")
		}
	})
	t.Run("payload edited with checksums fixed", func(t *testing.T) {
		// Same key (the attacker has the signing key file): the held
		// checkpoint still proves the history changed.
		f := orig
		f.log = slices.Clone(orig.log)
		s := sp[1]
		f.log[s.off+s.n-frameTrailer-1] ^= 1
		refix(f.log, s)
		rep := f.verify(nil)
		wantTampered(t, rep, 0, ErrCheckpointMismatch)
	})
}

func parseRecord(t testing.TB, b []byte) Record {
	t.Helper()
	rr := recordReader{r: bytes.NewReader(b)}
	rec, _, err := rr.next()
	if err != nil {
		t.Fatal(err)
	}
	rec.Payload = slices.Clone(rec.Payload)
	return rec
}

func TestVerifyUnreadable(t *testing.T) {
	rep := Verify(filepath.Join(t.TempDir(), "missing", LogFile), VerifyOptions{})
	if rep.Status != StatusUnreadable || !errors.Is(rep.Err, ErrUnreadable) {
		t.Fatalf("status %v err %v", rep.Status, rep.Err)
	}
	dir := writeLog(t, 2, 4)
	if err := os.Chmod(filepath.Join(dir, LogFile), 0); err != nil {
		t.Fatal(err)
	}
	// A directory in place of the log is an I/O problem, not evidence.
	rep = Verify(dir, VerifyOptions{})
	if rep.Status != StatusUnreadable {
		t.Fatalf("status %v err %v", rep.Status, rep.Err)
	}
}

// Ed25519 signatures end in a base64 character with unused low bits; a
// lenient decoder would accept a checkpoint with those bits changed.
func TestCheckpointSignatureCanonical(t *testing.T) {
	dir := writeLog(t, 1, 4)
	for range 20 {
		cp := mustRead(t, filepath.Join(dir, CheckpointFile))
		i := bytes.LastIndexByte(cp, '=') - 1
		for _, alt := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
			mod := slices.Clone(cp)
			if mod[i] == alt {
				continue
			}
			mod[i] = alt
			if _, err := ParseCheckpoint(mod); err == nil {
				t.Fatalf("checkpoint with signature char %q instead of %q parses", alt, cp[i])
			}
		}
		l := openLog(t, dir, 4)
		l.Checkpoint()
		l.Close()
	}
}

// Verify checks the signature of a checkpoint record only when no verified
// signed root covers it (see sigChecks). One that nothing covers, here a
// record after the checkpoint file's size, is checked on its own.
func TestCheckpointRecordBeyondFileIsChecked(t *testing.T) {
	dir := writeLog(t, 5, 100)
	f := readFiles(t, dir)
	key, err := loadSigningKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := f.verify(nil)
	cp, err := signCheckpoint(key.signer, key.vkey, key.id, rep.Head)
	if err != nil {
		t.Fatal(err)
	}
	// The same text with one bit of the signature changed, still in
	// canonical base64.
	sig := cp.Text[bytes.LastIndexByte(cp.Text, ' ')+1 : len(cp.Text)-1]
	raw, _ := base64.StdEncoding.DecodeString(string(sig))
	raw[10] ^= 1
	forged := slices.Concat(cp.Text[:len(cp.Text)-len(sig)-1], []byte(base64.StdEncoding.EncodeToString(raw)), []byte("\n"))
	if _, err := ParseCheckpoint(forged); err == nil {
		t.Fatal("self-check: the forged checkpoint verifies")
	}
	good := f
	good.log = slices.Concat(f.log, frame(encodeBody(KindCheckpoint, key.id, rep.Head.Size, cp.Text)))
	if r := good.verify(nil); r.Status != StatusIntact {
		t.Fatalf("a genuine record after the file checkpoint: %v", r.Err)
	}
	bad := f
	bad.log = slices.Concat(f.log, frame(encodeBody(KindCheckpoint, key.id, rep.Head.Size, forged)))
	wantTampered(t, bad.verify(nil), rep.Head.Size, ErrBadCheckpoint)
}
