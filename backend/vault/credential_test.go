package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredentialValidation(t *testing.T) {
	base := sampleCredential("ok", "CANARY-validation")
	cases := []struct {
		name   string
		edit   func(c *NewCredential)
		errHas string
	}{
		{"valid bearer", func(c *NewCredential) {}, ""},
		{"empty name", func(c *NewCredential) { c.Name = "  " }, "name"},
		{"control in name", func(c *NewCredential) { c.Name = "a\x07b" }, "name"},
		{"empty secret", func(c *NewCredential) { c.Secret = Secret{} }, "secret is empty"},
		{"newline in secret", func(c *NewCredential) { c.Secret = NewSecret([]byte("CANARY-a\nb")) }, "line break"},
		{"unknown format", func(c *NewCredential) { c.Injection.Format = "cookie" }, "injection format"},
		{"bearer with template", func(c *NewCredential) { c.Injection.Template = "{secret}" }, "bearer injection"},
		{"header ok", func(c *NewCredential) {
			c.Injection = Injection{Format: InjectHeader, HeaderName: "X-Api-Key", Template: "Token {secret}"}
		}, ""},
		{"header without placeholder", func(c *NewCredential) {
			c.Injection = Injection{Format: InjectHeader, HeaderName: "X-Api-Key", Template: "Token"}
		}, "exactly once"},
		{"header placeholder twice", func(c *NewCredential) {
			c.Injection = Injection{Format: InjectHeader, HeaderName: "X-Api-Key", Template: "{secret}{secret}"}
		}, "exactly once"},
		{"header bad name", func(c *NewCredential) {
			c.Injection = Injection{Format: InjectHeader, HeaderName: "X Api", Template: "{secret}"}
		}, "header name"},
		{"basic ok", func(c *NewCredential) { c.Injection = Injection{Format: InjectBasic, Username: "bot"} }, ""},
		{"basic colon", func(c *NewCredential) { c.Injection = Injection{Format: InjectBasic, Username: "a:b"} }, "username"},
		{"no hosts", func(c *NewCredential) { c.Hosts = nil }, "at least one host"},
		{"scheme in host", func(c *NewCredential) { c.Hosts = []string{"https://api.example.com"} }, "bare host"},
		{"path in host", func(c *NewCredential) { c.Hosts = []string{"api.example.com/v1"} }, "bare host"},
		{"bad port", func(c *NewCredential) { c.Hosts = []string{"api.example.com:99999"} }, "port"},
		{"wildcard tld", func(c *NewCredential) { c.Hosts = []string{"*.com"} }, "two labels"},
		{"inner wildcard", func(c *NewCredential) { c.Hosts = []string{"api.*.example.com"} }, "leftmost"},
		{"duplicate host", func(c *NewCredential) { c.Hosts = []string{"A.example.com", "a.example.com"} }, "twice"},
		{"ipv6 ok", func(c *NewCredential) { c.Hosts = []string{"[::1]:8080", "127.0.0.1:9000"} }, ""},
		{"bad ipv4", func(c *NewCredential) { c.Hosts = []string{"1.2.3.999"} }, "IP address"},
		{"ipv4 leading zero", func(c *NewCredential) { c.Hosts = []string{"01.2.3.4"} }, "IP address"},
		{"ipv6 bare", func(c *NewCredential) { c.Hosts = []string{"::1"} }, "brackets"},
		{"relative path", func(c *NewCredential) { c.PathPrefixes = []string{"v1"} }, "start with"},
		{"dotdot path", func(c *NewCredential) { c.PathPrefixes = []string{"/v1/../admin"} }, "\"..\""},
		{"query in path", func(c *NewCredential) { c.PathPrefixes = []string{"/v1?x=1"} }, "not allowed"},
		{"no approval", func(c *NewCredential) { c.Approval = "" }, "approval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := base
			nc.Secret = NewSecret([]byte("CANARY-validation"))
			c.edit(&nc)
			_, err := nc.validate()
			if c.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, c.errHas)
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestCredentialFor(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	add := func(name string, hosts, paths []string) CredentialView {
		t.Helper()
		c := sampleCredential(name, "CANARY-for-"+name)
		c.Hosts, c.PathPrefixes = hosts, paths
		view, err := v.Credentials().Add(c)
		if err != nil {
			t.Fatal(err)
		}
		return view
	}
	add("wild", []string{"*.example.com"}, nil)
	add("exact", []string{"api.example.com"}, nil)
	add("exact-v2", []string{"api.example.com"}, []string{"/v2"})
	add("port", []string{"api.example.com:8443"}, nil)
	add("tie-a", []string{"tie.example.org"}, []string{"/x"})
	add("tie-b", []string{"tie.example.org"}, []string{"/x"})
	cases := []struct {
		host, path string
		want       string
		err        error
	}{
		{"api.example.com", "/v1/users", "exact", nil},
		{"API.example.com:443", "/v1", "exact", nil},
		{"api.example.com", "/v2/users", "exact-v2", nil},
		{"api.example.com", "/v2", "exact-v2", nil},
		{"api.example.com", "/v20", "exact", nil},
		{"api.example.com:8443", "/v2", "port", nil},
		{"other.example.com", "/", "wild", nil},
		{"a.b.example.com", "/", "", ErrNoCredential},
		{"example.com", "/", "", ErrNoCredential},
		{"api.example.com:8080", "/", "", ErrNoCredential},
		{"evil.com", "/", "", ErrNoCredential},
		{"tie.example.org", "/x/1", "", ErrAmbiguousCredential},
	}
	for _, c := range cases {
		t.Run(c.host+c.path, func(t *testing.T) {
			view, secret, err := credentialAndSecret(v, mustTarget(t, "https://"+c.host+c.path))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if view.Name != c.want || string(secret.Bytes()) != "CANARY-for-"+c.want {
				t.Fatalf("got %q", view.Name)
			}
			secret.Wipe()
		})
	}
}

func TestRemoveCredential(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	c, err := v.Credentials().Add(sampleCredential("x", "CANARY-rm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Credentials().Remove(c.ID); err != nil {
		t.Fatal(err)
	}
	if err := v.Credentials().Remove(c.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
	v.Lock("t")
	if err := v.Unlock(pass(testPass)); err != nil {
		t.Fatal(err)
	}
	if l, _ := v.Credentials().List(); len(l) != 0 {
		t.Fatalf("removed credential is back: %v", l)
	}
}

// TestCanary: a secret never appears in the database files, errors, the
// listing's JSON, the formatted or logged credential.
func TestCanary(t *testing.T) {
	const canary = "CANARY-7f3a9c1e-never-leak"
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	v, dir := newUnlocked(t, testOptions(newFakeClock()))
	nc := sampleCredential("canary", canary)
	view, err := v.Credentials().Add(nc)
	if err != nil {
		t.Fatal(err)
	}
	bad := nc
	bad.Hosts = []string{canary + ".example.com/x"}
	_, badErr := v.Credentials().Add(bad)
	list, err := v.Credentials().List()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(list)
	ncJSON, _ := json.Marshal(nc)
	logger.Info("credential", "new", nc, "secret", nc.Secret, "view", view, "pass", pass(testPass))
	_, secret, err := credentialAndSecret(v, apiRoot)
	if err != nil {
		t.Fatal(err)
	}
	printed := fmt.Sprintf("%v %+v %#v %s %x %q", nc, nc, nc, secret, secret, *secret)
	wrongErr := fmt.Sprint(v.Unlock(pass(canary)))

	for what, text := range map[string]string{
		"list JSON": string(js), "NewCredential JSON": string(ncJSON), "logs": logs.String(),
		"fmt": printed, "wrong unlock": wrongErr,
	} {
		if strings.Contains(text, canary) || strings.Contains(text, "CANARY-7f3a") {
			t.Errorf("%s leaks the canary: %s", what, text)
		}
	}
	if badErr == nil {
		t.Fatal("bad host accepted")
	}
	if !strings.Contains(string(ncJSON), "REDACTED") {
		t.Errorf("NewCredential JSON: %s", ncJSON)
	}
	// Files on disk, while the vault is open (WAL live) and after close.
	checkFiles := func(when string) {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(canary)) || bytes.Contains(b, []byte("7f3a9c1e")) {
				t.Errorf("%s: %s contains the canary in plain text", when, filepath.Base(f))
			}
		}
	}
	checkFiles("open")
	v.Lock("t")
	v.Close()
	checkFiles("closed")
}

// A secret is read for the very credential and version the caller chose: a
// credential removed (or replaced) since then is ErrCredentialChanged,
// never another credential's secret.
func TestSecretOfChosenVersion(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	c := sampleCredential("one", "CANARY-one-1234")
	c.Hosts = []string{"api.example.com"}
	view, err := v.Credentials().Add(c)
	if err != nil {
		t.Fatal(err)
	}
	chosen, err := v.Credentials().For(apiRoot)
	if err != nil || chosen.ID != view.ID {
		t.Fatalf("%+v %v", chosen, err)
	}
	if s, err := v.Credentials().SecretOf(chosen.ID, chosen.Version+1); !errors.Is(err, ErrCredentialChanged) || s != nil {
		t.Fatalf("another version: %v", err)
	}
	if err := v.Credentials().Remove(view.ID); err != nil {
		t.Fatal(err)
	}
	c2 := sampleCredential("two", "CANARY-two-5678")
	c2.Hosts = []string{"api.example.com"}
	if _, err := v.Credentials().Add(c2); err != nil {
		t.Fatal(err)
	}
	if s, err := v.Credentials().SecretOf(chosen.ID, chosen.Version); !errors.Is(err, ErrCredentialChanged) || s != nil {
		t.Fatalf("a removed credential: %v", err)
	}
}

// Which calls get a card of their own: every call per call, every call
// that is not a read when reads pass, none beyond the session's otherwise
// (what is a read is the channel's to say: the gateway's readMethod, an
// SSH host's read-only rules). An SSH host takes "writes" too.
func TestApprovalAsksEachCall(t *testing.T) {
	for _, tt := range []struct {
		a                Approval
		asksRead, asksWr bool
	}{
		{ApprovalSession, false, false},
		{ApprovalPerCall, true, true},
		{ApprovalWrites, false, true},
	} {
		if tt.a.AsksEachCall(true) != tt.asksRead || tt.a.AsksEachCall(false) != tt.asksWr {
			t.Errorf("%s: asks for a read %v, for a write %v", tt.a, tt.a.AsksEachCall(true), tt.a.AsksEachCall(false))
		}
	}
	v, _ := newUnlocked(t, testOptions(newFakeClock()))
	if _, err := v.Credentials().Add(NewCredential{Name: "w", Secret: NewSecret([]byte("s")), Injection: Injection{Format: InjectBearer},
		Hosts: []string{"api.example.com"}, Approval: ApprovalWrites}); err != nil {
		t.Fatalf("a credential whose reads pass: %v", err)
	}
	h := sampleHost("box")
	h.Approval = ApprovalWrites
	if _, err := v.SSHHosts().Add(h); err != nil {
		t.Fatalf("an SSH host whose reads pass: %v", err)
	}
	h = sampleHost("box2")
	h.Approval = "sometimes"
	if _, err := v.SSHHosts().Add(h); err == nil {
		t.Fatal("an SSH host took an unknown approval")
	}
}
