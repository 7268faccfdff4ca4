package sshaction

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	xssh "golang.org/x/crypto/ssh"
)

// FuzzImportPrivateKey: whatever a person pastes, the import never panics,
// fails only with its documented errors (whose texts quote nothing), and a
// key it accepts is stored in a form that gives back the same public key.
func FuzzImportPrivateKey(f *testing.F) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	plain, _ := xssh.MarshalPrivateKey(ed, "c")
	locked, _ := xssh.MarshalPrivateKeyWithPassphrase(ed, "c", []byte("pp"))
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	f.Add(pem.EncodeToMemory(plain), []byte(""))
	f.Add(pem.EncodeToMemory(locked), []byte("pp"))
	f.Add(pem.EncodeToMemory(locked), []byte("wrong"))
	f.Add(pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), []byte(""))
	f.Add([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\n"), []byte(""))
	f.Add([]byte("not a key"), []byte("x"))
	known := []error{ErrNotAKey, ErrPassphraseNeeded, ErrWrongPassphrase, ErrUnsupportedKey, ErrKeyTooLarge, ErrKDFTooSlow}
	f.Fuzz(func(t *testing.T, data, passphrase []byte) {
		k, err := ImportPrivateKey(data, passphrase, "fuzz")
		if err != nil {
			for _, e := range known {
				if err == e {
					return
				}
			}
			t.Fatalf("undocumented error %v", err)
		}
		pub, fp, err := PublicOf(k.PEM)
		if err != nil || fp != k.Fingerprint || !strings.HasPrefix(k.Public, pub) {
			t.Fatalf("accepted key does not round-trip: %v", err)
		}
	})
}

// FuzzParseRules: the rule parser never panics, what it accepts reads back
// to the same rules, every exact rule allows exactly its command, and a
// prefix rule never lets shell syntax follow its prefix.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		"systemctl status nginx\nprefix: journalctl -u nginx\n# c\n", "exact: a\nexact: a", "prefix: ls",
		"prefix:", "exact:\t", "ls \u202e", "a\r\nb\r\n", strings.Repeat("x\n", 300),
	} {
		f.Add(s, "ls -la /tmp")
	}
	f.Fuzz(func(t *testing.T, text, cmd string) {
		rs, err := ParseRules(text)
		if err != nil {
			if !errors.Is(err, ErrRule) {
				t.Fatalf("error %v does not wrap ErrRule", err)
			}
			return
		}
		back, err := ParseRules(rs.String())
		if err != nil || back.String() != rs.String() {
			t.Fatalf("round trip: %v", err)
		}
		if rs.Check() != nil {
			t.Fatal("parsed rules fail Check")
		}
		for _, r := range rs {
			if !rs.Allows(r.Command) {
				t.Fatalf("rule %q does not allow its own command", r.Command)
			}
		}
		if len(rs) == 0 || !rs.Allows(cmd) {
			return
		}
		for _, r := range rs {
			if cmd == r.Command {
				return
			}
		}
		// Allowed by a prefix only: what follows the prefix is plain.
		for _, r := range rs {
			if rest, ok := strings.CutPrefix(cmd, r.Command+" "); ok && r.Kind == RulePrefix && plainArguments(rest) {
				if strings.ContainsAny(rest, ";&|$`<>()'\"\\*?~#!\n") {
					t.Fatalf("prefix %q let %q through", r.Command, rest)
				}
				return
			}
		}
		t.Fatalf("%q allowed by no rule", cmd)
	})
}

// FuzzHostKeys: pasted host keys and known_hosts files never make the
// parsers panic, and every pin they return reads back as itself.
func FuzzHostKeys(f *testing.F) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	s, _ := xssh.NewSignerFromKey(ed)
	line := strings.TrimSpace(string(xssh.MarshalAuthorizedKey(s.PublicKey())))
	for _, seed := range []string{
		line, "host.example " + line, "[h]:2222 " + line + " c", hashed("h") + " " + line, "@revoked h " + line,
		"*.e,!x.e " + line, "h,\x00 " + line, "# c\n\n" + line,
	} {
		f.Add([]byte(seed), "h", 22)
	}
	f.Fuzz(func(t *testing.T, data []byte, host string, port int) {
		pins, _, err := FromKnownHosts(data, host, port)
		if err == nil {
			for _, p := range pins {
				if q, err := ParsePin(p.String()); err != nil || !bytes.Equal(q.key.Marshal(), p.key.Marshal()) {
					t.Fatalf("pin does not read back: %v", err)
				}
			}
		}
		if pins, err := ParsePins(string(data)); err == nil {
			if len(pins) == 0 || len(pins) > MaxPins {
				t.Fatalf("%d pins", len(pins))
			}
			for _, p := range pins {
				if _, err := ParsePin(p.String()); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
