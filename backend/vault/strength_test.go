package vault

import (
	"encoding/json"
	"os"
	"testing"
)

// vectorsFile holds the passphrases the setup screen's assessment
// (frontend/src/lib/passphrase.ts) and AssessPassphrase must rank alike;
// the frontend's passphrase.test.ts reads the same file.
const vectorsFile = "../../frontend/src/lib/passphrase.vectors.json"

func TestAssessPassphraseMatchesTheApp(t *testing.T) {
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Passphrase string `json:"passphrase"`
		Strength   string `json:"strength"`
		Bits       int    `json:"bits"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 10 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		got := AssessPassphrase([]byte(v.Passphrase))
		if got.Level != v.Strength || got.Bits != v.Bits {
			t.Errorf("%q: %s %d bits, the app says %s %d", v.Passphrase, got.Level, got.Bits, v.Strength, v.Bits)
		}
	}
}
