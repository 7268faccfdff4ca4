package version

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestVersionFile: VERSION holds one version, usable in the Debian
// package, the tarball and the Windows installer, and wails.json (which
// the wails CLI would read) says the same one.
func TestVersionFile(t *testing.T) {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	// x.y.z only: it is a Debian version without a revision, and the
	// Windows installer's file version (x.y.z.0) takes numbers only.
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) || string(b) != v+"\n" {
		t.Fatalf("VERSION is %q: want one line like 0.1.0", b)
	}
	var w struct {
		Info struct {
			ProductVersion string `json:"productVersion"`
		} `json:"info"`
	}
	raw, err := os.ReadFile("../../wails.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	if w.Info.ProductVersion != v {
		t.Errorf("wails.json says productVersion %q, VERSION says %q", w.Info.ProductVersion, v)
	}
}

// TestUnstampedSaysDevel: go test does not stamp, so this binary is an
// unstamped build; cmd/yett's TestVersionStamped covers a stamped one.
func TestUnstampedSaysDevel(t *testing.T) {
	if Number() != "devel" || String() != "devel" {
		t.Errorf("unstamped build says %q / %q", Number(), String())
	}
}
