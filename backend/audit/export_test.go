package audit

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestExportVerifies(t *testing.T) {
	dir := writeLog(t, 20, 4)
	var buf bytes.Buffer
	cp, left, err := Export(dir, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d entries left out of a closed log", left)
	}
	vkey, _ := ReadVerifierKey(dir)
	rep := VerifyExport(bytes.NewReader(buf.Bytes()), VerifyOptions{VerifierKey: vkey})
	if rep.Status != StatusIntact || rep.Head != cp.Head {
		t.Fatalf("export: %v head %v want %v: %v", rep.Status, rep.Head, cp.Head, rep.Err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\nproof ")); n < 5 {
		t.Fatalf("export holds %d proofs", n)
	}
	// Any single changed byte is caught.
	b := buf.Bytes()
	for i := 0; i < len(b); i += 7 {
		mod := slices.Clone(b)
		mod[i] ^= 0x20
		if rep := VerifyExport(bytes.NewReader(mod), VerifyOptions{VerifierKey: vkey}); rep.Status == StatusIntact {
			t.Fatalf("byte %d changed, export still verifies", i)
		}
	}
	// A bad proof is a proof error, not a parse error.
	e, err := parseExport(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	e.proofs[0].Hashes[0][0] ^= 1
	var mod bytes.Buffer
	mod.WriteString(string(b[:bytes.Index(b, []byte("\nproof "))+1]))
	for _, p := range e.proofs {
		mod.WriteString(formatProof(p))
	}
	mod.Write(b[bytes.Index(b, []byte("\nlog "))+1:])
	rep = VerifyExport(&mod, VerifyOptions{VerifierKey: vkey})
	if !errors.Is(rep.Err, ErrCheckpointMismatch) {
		t.Fatalf("corrupted proof: %v", rep.Err)
	}
}
