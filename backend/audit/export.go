package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// An export is one file that anyone can verify offline: the verifier key,
// the signed checkpoint it ends at, a consistency proof (RFC 6962, from
// tlog.ProveTree) from every checkpoint inside the log to that one, and the
// raw records the checkpoint covers. Entries are still ciphertext.
const exportMagic = "yett-audit-export v1\n"

// Proof is a consistency proof between two tree heads of one log.
type Proof struct {
	Old, New Head
	Hashes   tlog.TreeProof
}

// ErrBadExport is returned for an export file that does not parse.
var ErrBadExport = errors.New("audit: malformed export")

// IsExport reports whether b starts like an export file.
func IsExport(b []byte) bool { return bytes.HasPrefix(b, []byte(exportMagic)) }

// Export writes the log in dir, up to its latest checkpoint file, to w.
// Entries after that checkpoint are left out (they are not signed yet) and
// counted in the returned number. Export refuses a log that fails Verify.
func Export(dir string, w io.Writer) (Checkpoint, int64, error) {
	f, size, cpText, err := openConsistent(filepath.Join(dir, LogFile), filepath.Join(dir, CheckpointFile))
	if err != nil {
		return Checkpoint{}, 0, err
	}
	defer f.Close()
	if cpText == nil {
		return Checkpoint{}, 0, errors.New("audit: export needs a checkpoint file")
	}
	vkey, err := ReadVerifierKey(dir)
	if err != nil {
		return Checkpoint{}, 0, err
	}
	cp, err := ParseCheckpoint(cpText)
	if err != nil {
		return Checkpoint{}, 0, err
	}
	logBytes := make([]byte, size)
	if _, err := f.ReadAt(logBytes, 0); err != nil {
		return Checkpoint{}, 0, err
	}
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	var olds []Head
	end := int64(-1)
	sc := scanConfig{vkey: vkey, visit: func(i, off int64, rec Record, h tlog.Hash) error {
		if i == cp.Size {
			end = off
		}
		if i >= cp.Size {
			return nil
		}
		if rec.Kind == KindCheckpoint && i > 0 {
			// Every tree extends the empty one; there is no proof to carry.
			olds = append(olds, Head{Size: i})
		}
		hs, err := tlog.StoredHashesForRecordHash(i, h, reader)
		stored = append(stored, hs...)
		return err
	}}
	c := cp
	sc.file = &c
	res := scan(bytes.NewReader(logBytes), int64(len(logBytes)), sc, Report{FirstBad: -1, FirstBadOffset: -1})
	if res.Status != StatusIntact {
		return Checkpoint{}, 0, fmt.Errorf("audit: refusing to export a log that fails verification: %w", res.Err)
	}
	if end < 0 {
		end = res.size
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%svkey %s\ncheckpoint %d\n%s", exportMagic, vkey, len(cp.Text), cp.Text)
	for _, old := range olds {
		if old.Root, err = tlog.TreeHash(old.Size, reader); err != nil {
			return Checkpoint{}, 0, err
		}
		p, err := tlog.ProveTree(cp.Size, old.Size, reader)
		if err != nil {
			return Checkpoint{}, 0, err
		}
		bw.WriteString(formatProof(Proof{Old: old, New: cp.Head, Hashes: p}))
	}
	fmt.Fprintf(bw, "log %d\n", end)
	bw.Write(logBytes[:end])
	bw.WriteString("end\n")
	return cp, res.Entries - cp.Size, bw.Flush()
}

// formatProof renders a proof section: a header line, then one base64 hash
// per line.
func formatProof(p Proof) string {
	var b strings.Builder
	fmt.Fprintf(&b, "proof %d %s %d %s %d\n", p.Old.Size, p.Old.Root, p.New.Size, p.New.Root, len(p.Hashes))
	for _, h := range p.Hashes {
		b.WriteString(h.String() + "\n")
	}
	return b.String()
}

// parseProof reads one proof section after its "proof " keyword.
func parseProof(br *bufio.Reader, header string) (Proof, error) {
	f := strings.Fields(header)
	if len(f) != 5 {
		return Proof{}, fmt.Errorf("%w: proof header", ErrBadExport)
	}
	var p Proof
	var err error
	var k int
	if p.Old.Size, err = parseSize(f[0]); err == nil {
		if p.Old.Root, err = tlog.ParseHash(f[1]); err == nil {
			if p.New.Size, err = parseSize(f[2]); err == nil {
				if p.New.Root, err = tlog.ParseHash(f[3]); err == nil {
					k, err = strconv.Atoi(f[4])
				}
			}
		}
	}
	if err != nil || k < 0 || k > 128 {
		return Proof{}, fmt.Errorf("%w: proof header", ErrBadExport)
	}
	for range k {
		line, err := readLine(br)
		if err != nil {
			return Proof{}, err
		}
		h, err := tlog.ParseHash(line)
		if err != nil {
			return Proof{}, fmt.Errorf("%w: proof hash", ErrBadExport)
		}
		p.Hashes = append(p.Hashes, h)
	}
	return p, nil
}

func parseSize(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("%w: size", ErrBadExport)
	}
	return n, nil
}

func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadExport, err)
	}
	if len(line) > 4096 {
		return "", fmt.Errorf("%w: line too long", ErrBadExport)
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// export is a parsed export file.
type export struct {
	vkey       string
	checkpoint []byte
	proofs     []Proof
	log        []byte
}

func parseExport(r io.Reader) (*export, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(exportMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != exportMagic {
		return nil, fmt.Errorf("%w: not an export", ErrBadExport)
	}
	var e export
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	var ok bool
	if e.vkey, ok = strings.CutPrefix(line, "vkey "); !ok {
		return nil, fmt.Errorf("%w: no vkey line", ErrBadExport)
	}
	if e.checkpoint, err = readSection(br, "checkpoint", 16<<10); err != nil {
		return nil, err
	}
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(line, "proof "); ok {
			if len(e.proofs) > 1<<20 {
				return nil, fmt.Errorf("%w: too many proofs", ErrBadExport)
			}
			p, err := parseProof(br, rest)
			if err != nil {
				return nil, err
			}
			e.proofs = append(e.proofs, p)
			continue
		}
		n, ok := strings.CutPrefix(line, "log ")
		if !ok {
			return nil, fmt.Errorf("%w: unexpected section", ErrBadExport)
		}
		size, err := parseSize(n)
		if err != nil {
			return nil, err
		}
		// Read what is there rather than trusting the size to allocate.
		var buf bytes.Buffer
		if m, err := io.CopyN(&buf, br, size); err != nil || m != size {
			return nil, fmt.Errorf("%w: log section cut short", ErrBadExport)
		}
		e.log = buf.Bytes()
		break
	}
	if line, err := readLine(br); err != nil || line != "end" {
		return nil, fmt.Errorf("%w: no end line", ErrBadExport)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes after end", ErrBadExport)
	}
	return &e, nil
}

func readSection(br *bufio.Reader, name string, max int64) ([]byte, error) {
	line, err := readLine(br)
	if err != nil {
		return nil, err
	}
	n, ok := strings.CutPrefix(line, name+" ")
	if !ok {
		return nil, fmt.Errorf("%w: want %s section", ErrBadExport, name)
	}
	size, err := parseSize(n)
	if err != nil || size > max {
		return nil, fmt.Errorf("%w: %s size", ErrBadExport, name)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, fmt.Errorf("%w: %s cut short", ErrBadExport, name)
	}
	return b, nil
}

// VerifyExport checks an export file like Verify checks a log, and also
// checks every consistency proof in it with tlog.CheckTree. The verifier key
// to trust is opts.VerifierKey; when empty, the export's own key is used and
// a note says that this proves integrity, not origin.
func VerifyExport(r io.Reader, opts VerifyOptions) Report {
	rep := Report{FirstBad: -1, FirstBadOffset: -1}
	e, err := parseExport(r)
	if err != nil {
		rep.tamper(-1, -1, err)
		return rep
	}
	vkey := opts.VerifierKey
	if vkey == "" {
		vkey = e.vkey
		rep.Notes = append(rep.Notes, "trusting the verifier key inside the export; pass the installation's key to prove where it came from")
	} else if vkey != e.vkey {
		rep.tamper(-1, -1, fmt.Errorf("%w: export names key %s", ErrUntrustedCheckpoint, e.vkey))
		return rep
	}
	var heads []Head
	sc := verifyStreamConfig("export checkpoint", e.checkpoint, vkey, opts.Held, &rep)
	if rep.Status != StatusIntact {
		return rep
	}
	sc.visit = func(i, _ int64, rec Record, _ tlog.Hash) error {
		if rec.Kind == KindCheckpoint {
			cp, _, _ := parseUnverified(rec.Payload) // scan checks it, signature included
			if cp.Size > 0 {
				heads = append(heads, cp.Head)
			}
		}
		return nil
	}
	res := scan(bytes.NewReader(e.log), int64(len(e.log)), sc, rep)
	rep = res.Report
	if rep.Status != StatusIntact {
		return rep
	}
	final := sc.file.Head
	if res.Torn != nil || res.Entries != final.Size {
		rep.tamper(res.Entries, -1, fmt.Errorf("%w: export checkpoint signs %d entries, export holds %d", ErrTruncated, final.Size, res.Entries))
		return rep
	}
	if len(e.proofs) != len(heads) {
		rep.tamper(-1, -1, fmt.Errorf("%w: %d proofs for %d checkpoints", ErrBadExport, len(e.proofs), len(heads)))
		return rep
	}
	for i, p := range e.proofs {
		if p.Old != heads[i] || p.New != final {
			rep.tamper(p.Old.Size, -1, fmt.Errorf("%w: proof %d is for other heads", ErrCheckpointMismatch, i))
			return rep
		}
		if err := tlog.CheckTree(p.Hashes, p.New.Size, p.New.Root, p.Old.Size, p.Old.Root); err != nil {
			rep.tamper(p.Old.Size, -1, fmt.Errorf("%w: consistency proof %s -> %s: %v", ErrCheckpointMismatch, p.Old, p.New, err))
			return rep
		}
	}
	return rep
}

// verifyStreamConfig parses the checkpoint texts the way verifyStream does.
func verifyStreamConfig(label string, cpText []byte, vkey string, held []byte, rep *Report) scanConfig {
	sc := scanConfig{vkey: vkey}
	if held != nil {
		c, err := ParseCheckpoint(held)
		if err != nil {
			rep.unreadable(fmt.Errorf("held checkpoint: %w", err))
			return sc
		}
		sc.held, rep.Held = &c, &c
	}
	if cpText != nil {
		c, err := ParseCheckpoint(cpText)
		if err != nil {
			rep.tamper(-1, -1, fmt.Errorf("%s: %w", label, err))
			return sc
		}
		sc.file = &c
	}
	return sc
}
