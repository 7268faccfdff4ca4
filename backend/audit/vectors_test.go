package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

var update = flag.Bool("update", false, "regenerate testdata/vectors (ciphertext is random, so only when the format changes; testdata/vectors/v1 is format 1 and never regenerated)")

const vectorsDir = "testdata/vectors"

// fixedSigningKey is the note signing key for log ID 0x00..0x0f with the
// Ed25519 seed 0x20..0x3f: test vectors only.
func fixedSigningKey(t testing.TB) (skey, vkey string) {
	var id LogID
	seed := make([]byte, ed25519.SeedSize)
	for i := range id {
		id[i] = byte(i)
	}
	for i := range seed {
		seed[i] = byte(0x20 + i)
	}
	name := keyName(id)
	vkey, err := note.NewEd25519VerifierKey(name, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Split(vkey, "+")[1]
	return "PRIVATE+KEY+" + name + "+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, seed...)), vkey
}

// vectorFacts is testdata/vectors/expected.json: what the golden log must
// verify and decrypt to.
type vectorFacts struct {
	Size         int64    `json:"size"`
	Root         string   `json:"root"`
	RecordHashes []string `json:"record_hashes"`
	Kinds        string   `json:"kinds"`
	Events       []Event  `json:"events"`
}

// TestVectors checks the golden log of the current format (2: segment keys)
// and, in testdata/vectors/v1, one written by format 1 (an age file per
// entry), which must keep verifying and reading: logs are kept for years.
func TestVectors(t *testing.T) {
	if *update {
		generateVectors(t)
	}
	for _, dir := range []string{vectorsDir, filepath.Join(vectorsDir, "v1")} {
		t.Run(dir, func(t *testing.T) { checkVectors(t, dir) })
	}
	// The framing of one fixed record, byte for byte (see the format doc).
	var id LogID
	for i := range id {
		id[i] = byte(i)
	}
	got := hex.EncodeToString(frame(encodeBody(KindEvent, id, 1, []byte("hello"))))
	want := strings.TrimSpace(string(mustRead(t, filepath.Join(vectorsDir, "record.hex"))))
	if got != want {
		t.Fatalf("framing of the fixed record\n got %s\nwant %s", got, want)
	}
}

func checkVectors(t *testing.T, dir string) {
	facts := vectorFacts{}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "expected.json")), &facts); err != nil {
		t.Fatal(err)
	}
	_, vkey := fixedSigningKey(t)
	if got := strings.TrimSpace(string(mustRead(t, filepath.Join(dir, VerifierKeyFile)))); got != vkey {
		t.Fatalf("verifier.key %q, want %q", got, vkey)
	}
	rep := Verify(filepath.Join(dir, LogFile), VerifyOptions{VerifierKey: vkey})
	if rep.Status != StatusIntact || rep.Head.Size != facts.Size || rep.Head.Root.String() != facts.Root {
		t.Fatalf("vector log: %v %v (want size %d root %s): %v", rep.Status, rep.Head, facts.Size, facts.Root, rep.Err)
	}
	// Record hashes and kinds, recomputed from the bytes.
	var hashes []string
	var kinds []byte
	sc := scanConfig{vkey: vkey, visit: func(_, _ int64, rec Record, h tlog.Hash) error {
		hashes = append(hashes, h.String())
		kinds = append(kinds, rec.Kind)
		return nil
	}}
	log := mustRead(t, filepath.Join(dir, LogFile))
	scan(strings.NewReader(string(log)), int64(len(log)), sc, Report{})
	if !reflect.DeepEqual(hashes, facts.RecordHashes) || string(kinds) != facts.Kinds {
		t.Fatalf("record hashes/kinds differ from expected.json")
	}
	var events []Event
	for e, err := range ReadEvents(filepath.Join(dir, LogFile), identity(t)) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e.Event)
	}
	if !reflect.DeepEqual(events, facts.Events) {
		t.Fatalf("decrypted events differ from expected.json")
	}
	cp, err := ParseCheckpoint(mustRead(t, filepath.Join(dir, CheckpointFile)))
	if err != nil || cp.Head != rep.Head || cp.VerifierKey != vkey {
		t.Fatalf("checkpoint: %v %v", cp.Head, err)
	}
}

func generateVectors(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "v")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	skey, vkey := fixedSigningKey(t)
	os.WriteFile(filepath.Join(tmp, SigningKeyFile), []byte(skey+"\n"), 0o600)
	os.WriteFile(filepath.Join(tmp, VerifierKeyFile), []byte(vkey+"\n"), 0o644)
	l := openLog(t, tmp, 3)
	facts := vectorFacts{}
	for i := range 5 {
		e := sampleEvent(i)
		if _, err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		facts.Events = append(facts.Events, e)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := Verify(filepath.Join(tmp, LogFile), VerifyOptions{})
	facts.Size, facts.Root = rep.Head.Size, rep.Head.Root.String()
	sc := scanConfig{vkey: vkey, visit: func(_, _ int64, rec Record, h tlog.Hash) error {
		facts.RecordHashes = append(facts.RecordHashes, h.String())
		facts.Kinds += string(rec.Kind)
		return nil
	}}
	log := mustRead(t, filepath.Join(tmp, LogFile))
	scan(strings.NewReader(string(log)), int64(len(log)), sc, Report{})
	os.MkdirAll(vectorsDir, 0o755)
	for _, name := range []string{LogFile, CheckpointFile, VerifierKeyFile} {
		if err := os.WriteFile(filepath.Join(vectorsDir, name), mustRead(t, filepath.Join(tmp, name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j, _ := json.MarshalIndent(facts, "", "  ")
	os.WriteFile(filepath.Join(vectorsDir, "expected.json"), append(j, '\n'), 0o644)
	var id LogID
	for i := range id {
		id[i] = byte(i)
	}
	os.WriteFile(filepath.Join(vectorsDir, "record.hex"), []byte(hex.EncodeToString(frame(encodeBody(KindEvent, id, 1, []byte("hello"))))+"\n"), 0o644)
	os.WriteFile(filepath.Join(vectorsDir, "identity.txt"), []byte("# test-only age identity for these vectors; never a real key\n"+testIdentity+"\n"), 0o644)
}
