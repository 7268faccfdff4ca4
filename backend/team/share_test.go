package team

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/yettdev/yett/backend/inventory"
)

// cosigned makes a checkpoint as a Yett audit log signs it, cosigned by
// witnesses.
func cosigned(t testing.TB, witnesses ...string) ([]byte, string) {
	t.Helper()
	id := make([]byte, 16)
	rand.Read(id)
	logHex := hex.EncodeToString(id)
	skey, vkey, err := note.GenerateKey(rand.Reader, "yett-audit-"+logHex)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	signers := []note.Signer{signer}
	for _, w := range witnesses {
		ws, _, _ := note.GenerateKey(rand.Reader, w)
		s, _ := note.NewSigner(ws)
		signers = append(signers, s)
	}
	root := base64.StdEncoding.EncodeToString(make([]byte, 32))
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("yett.dev/audit/%s\n42\n%s\nvkey %s\n", logHex, root, vkey)}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return msg, logHex
}

// A cosigned checkpoint becomes one record per witness, keyed by log,
// size and witness; a note with no cosignature, or none by its log, is
// refused.
func TestCosignatureRecords(t *testing.T) {
	msg, logHex := cosigned(t, "witness.example/a", "witness.example/b")
	recs, err := cosignatureRecords(msg)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if recs[0].LogID != logHex || recs[0].Size != 42 || recs[0].Witness != "witness.example/a" || recs[0].Cosignature != string(msg) {
		t.Fatalf("record: %+v", recs[0])
	}
	if recs[1].key() != logHex+":42:witness.example/b" {
		t.Fatalf("key %s", recs[1].key())
	}
	alone, _ := cosigned(t)
	if _, err := cosignatureRecords(alone); err == nil || !strings.Contains(err.Error(), "no cosignature") {
		t.Fatalf("a checkpoint without cosignature: %v", err)
	}
	other, _ := cosigned(t, "w")
	body, sigs, _ := strings.Cut(string(other), "\n\n")
	_, witnessLine, _ := strings.Cut(sigs, "\n")
	if _, err := cosignatureRecords([]byte(body + "\n\n" + witnessLine)); err == nil {
		t.Fatal("a note its log did not sign was taken")
	}
}

// FuzzCosignatureRecords: no note makes it panic, and what it takes names
// a witness and the log's own checkpoint.
func FuzzCosignatureRecords(f *testing.F) {
	msg, _ := cosigned(f, "witness.example")
	f.Add(msg)
	f.Add([]byte("yett.dev/audit/00\n1\n\n\n— w AAAA\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		recs, err := cosignatureRecords(in)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Witness == "" || r.LogID == "" || r.Cosignature != string(in) {
				t.Fatalf("record %+v", r)
			}
		}
	})
}

// A drill report shares digests of its evidence, never the evidence.
func TestDrillRecordDigestsEvidence(t *testing.T) {
	secretish := "session s-41 of /usr/bin/agent pid 4242 used it"
	d, err := drillRecord(inventory.Report{ID: "dr-1", AuthorizationID: "az-1", Kind: inventory.DrillFull, Passed: true,
		Steps: []inventory.Step{{Name: inventory.StepAuditNamesUsers, Passed: true, Evidence: []string{secretish}}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.Report), "pid 4242") || !strings.Contains(string(d.Report), evidenceDigest(secretish)) {
		t.Fatalf("the shared report: %s", d.Report)
	}
}
