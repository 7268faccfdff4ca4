package target

import (
	"encoding/json"
	"net/url"
	"os"
	"testing"
)

// TestPlainHTTPRuleCases: the rule holds on the cases the window's copy of
// it (frontend/src/lib/urlRule.ts) is tested against too, so the two
// cannot drift apart.
func TestPlainHTTPRuleCases(t *testing.T) {
	b, err := os.ReadFile("../../frontend/src/lib/urlRule.cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []struct {
			URL   string `json:"url"`
			Plain bool   `json:"plain"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &table); err != nil || len(table.Cases) < 10 {
		t.Fatalf("the cases: %d, %v", len(table.Cases), err)
	}
	for _, c := range table.Cases {
		u, err := url.Parse(c.URL)
		if err != nil {
			t.Fatalf("%s: %v", c.URL, err)
		}
		if got := PlainHTTPAllowed(u.Hostname()); got != c.Plain {
			t.Errorf("%s: plain http allowed %v, want %v", c.URL, got, c.Plain)
		}
	}
}
