// Package darwin_test checks the macOS bundle's property lists, which no
// tool on Linux reads; make package's test assembles the bundle's layout
// (bundle.sh --layout-only) around a CLI cross-built for macOS.
package darwin_test

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"
)

// plist reads a flat <dict> of a property list: key to string, "true" or
// "false".
func plist(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	dec.Strict = true
	dec.Entity = xml.HTMLEntity
	out := map[string]string{}
	var key, text string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			depth++
			text = ""
			if tk.Name.Local == "true" || tk.Name.Local == "false" {
				out[key] = tk.Name.Local
			}
		case xml.CharData:
			text += string(tk)
		case xml.EndElement:
			depth--
			switch tk.Name.Local {
			case "key":
				key = text
			case "string":
				out[key] = text
			}
		}
	}
	if depth != 0 {
		t.Fatalf("%s: unbalanced", path)
	}
	return out
}

func TestInfoPlist(t *testing.T) {
	p := plist(t, "Info.plist")
	for k, want := range map[string]string{
		"CFBundlePackageType": "APPL", "CFBundleIdentifier": "dev.yett.Yett", "CFBundleExecutable": "yett-desktop",
		"CFBundleIconFile": "yett.icns", "CFBundleShortVersionString": "@VERSION@", "CFBundleVersion": "@VERSION@",
		"NSHighResolutionCapable": "true", "NSUserNotificationAlertStyle": "alert",
	} {
		if p[k] != want {
			t.Errorf("%s is %q, want %q", k, p[k], want)
		}
	}
	if _, err := os.Stat(p["CFBundleIconFile"]); err != nil {
		t.Errorf("the icon file: %v", err)
	}
}

func TestEntitlements(t *testing.T) {
	p := plist(t, "entitlements.plist")
	if p["com.apple.security.app-sandbox"] != "false" {
		t.Errorf("app-sandbox is %q: the gateway cannot inspect its peers inside the sandbox", p["com.apple.security.app-sandbox"])
	}
	for k := range p {
		if strings.HasPrefix(k, "com.apple.developer.") {
			t.Errorf("%s is restricted: without a provisioning profile the app is killed at launch", k)
		}
		// Each of these opens Yett's memory or code to other processes of
		// the user: a debugger's task port, injected libraries, DYLD_*
		// variables, writable code.
		if k == "com.apple.security.get-task-allow" || strings.HasPrefix(k, "com.apple.security.cs.") {
			t.Errorf("%s weakens the hardened runtime: another process of the user could read or change Yett's memory", k)
		}
	}
	// Both programs are signed with the hardened runtime.
	script, err := os.ReadFile("bundle.sh")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(script), "codesign --force --options runtime"); n < 2 {
		t.Errorf("bundle.sh signs %d program(s) with the hardened runtime, want the CLI and the app", n)
	}
}
