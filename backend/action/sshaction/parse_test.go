package sshaction

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// keygen makes a key with OpenSSH's own ssh-keygen, as a person would.
func keygen(t testing.TB, typ, passphrase string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	args := []string{"-q", "-t", typ, "-N", passphrase, "-C", "person@laptop", "-f", p}
	if typ == "rsa" {
		args = append(args, "-b", "2048")
	}
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestImportPrivateKey(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	smallRSA, _ := rsa.GenerateKey(rand.Reader, 1024)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(edKey)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	//lint:ignore SA1019 legacy encrypted PEM is what old keys on disk are
	legacy, _ := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), []byte("old pass"), x509.PEMCipherAES256) //nolint:staticcheck
	tests := []struct {
		name       string
		data       []byte
		passphrase string
		want       error
		typ        string
	}{
		{"openssh ed25519", keygen(t, "ed25519", ""), "", nil, "ssh-ed25519"},
		{"openssh ed25519 with passphrase", keygen(t, "ed25519", "s3cret pass"), "s3cret pass", nil, "ssh-ed25519"},
		{"openssh ecdsa with passphrase", keygen(t, "ecdsa", "pp"), "pp", nil, "ecdsa-sha2-nistp256"},
		{"openssh rsa", keygen(t, "rsa", ""), "", nil, "ssh-rsa"},
		{"passphrase missing", keygen(t, "ed25519", "s3cret pass"), "", ErrPassphraseNeeded, ""},
		{"wrong passphrase", keygen(t, "ed25519", "s3cret pass"), "not it", ErrWrongPassphrase, ""},
		{"passphrase given for a plain key", keygen(t, "ed25519", ""), "unneeded", nil, "ssh-ed25519"},
		{"pkcs1 rsa", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "", nil, "ssh-rsa"},
		{"legacy encrypted pem", pem.EncodeToMemory(legacy), "old pass", nil, "ssh-rsa"},
		{"legacy encrypted pem, wrong passphrase", pem.EncodeToMemory(legacy), "nope", ErrWrongPassphrase, ""},
		{"sec1 ec", pemOf("EC PRIVATE KEY", ecDER), "", nil, "ecdsa-sha2-nistp256"},
		{"pkcs8 ed25519", pemOf("PRIVATE KEY", pkcs8), "", nil, "ssh-ed25519"},
		{"rsa 1024", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(smallRSA)), "", ErrUnsupportedKey, ""},
		{"p224", func() []byte { d, _ := x509.MarshalPKCS8PrivateKey(ec224); return pemOf("PRIVATE KEY", d) }(), "", ErrUnsupportedKey, ""},
		{"public key", []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB person"), "", ErrNotAKey, ""},
		{"garbage pem", pemOf("OPENSSH PRIVATE KEY", []byte("CANARY-not-a-key")), "", ErrNotAKey, ""},
		{"empty", nil, "", ErrNotAKey, ""},
		{"huge", bytes.Repeat([]byte("A"), maxKeyFile+1), "", ErrKeyTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ImportPrivateKey(tt.data, []byte(tt.passphrase), "yett:web-1")
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err %v, want %v", err, tt.want)
				}
				if strings.Contains(err.Error(), "CANARY") || (tt.passphrase != "" && strings.Contains(err.Error(), tt.passphrase)) {
					t.Fatal("the error echoes its input")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Type != tt.typ || !strings.HasPrefix(k.Public, tt.typ+" ") || !strings.HasSuffix(k.Public, " yett:web-1") {
				t.Fatalf("type %q public %q", k.Type, k.Public)
			}
			// Stored unencrypted in the OpenSSH format, whatever came in:
			// the vault is what protects it.
			if !bytes.HasPrefix(k.PEM, []byte("-----BEGIN OPENSSH PRIVATE KEY-----")) {
				t.Fatal("not stored in the OpenSSH format")
			}
			pub, fp, err := PublicOf(k.PEM)
			if err != nil || fp != k.Fingerprint || !strings.HasPrefix(k.Public, pub) {
				t.Fatalf("the stored key does not give back its public half: %v", err)
			}
		})
	}
}

func TestImportRefusesSlowKDF(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := xssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("pp"))
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the rounds (the last four bytes of the KDF options) to a
	// number that would keep the importer busy for hours.
	b := block.Bytes
	i := bytes.Index(b, []byte("bcrypt"))
	opts := i + len("bcrypt") // the options' length, then the salt's
	saltLen := int(b[opts+4])<<24 | int(b[opts+5])<<16 | int(b[opts+6])<<8 | int(b[opts+7])
	r := opts + 8 + saltLen
	copy(b[r:r+4], []byte{0x7f, 0xff, 0xff, 0xff})
	start := time.Now()
	if _, err := ImportPrivateKey(pem.EncodeToMemory(block), []byte("pp"), ""); !errors.Is(err, ErrKDFTooSlow) {
		t.Fatalf("err %v, want ErrKDFTooSlow", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the refusal came after the work")
	}
}

func TestGenerateEd25519(t *testing.T) {
	a, err := GenerateEd25519("yett:db 1\n; rm")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateEd25519("x")
	if a.Fingerprint == b.Fingerprint {
		t.Fatal("two keys are the same")
	}
	if strings.ContainsAny(a.Public, "\n;") || !strings.HasPrefix(a.Public, "ssh-ed25519 ") {
		t.Fatalf("public line %q", a.Public)
	}
	if _, _, _, _, err := xssh.ParseAuthorizedKey([]byte(a.Public)); err != nil {
		t.Fatalf("public line does not parse as authorized_keys: %v", err)
	}
	a.Wipe()
	if a.PEM != nil {
		t.Fatal("Wipe left the key")
	}
}

func TestParseRules(t *testing.T) {
	rs, err := ParseRules("# deploy host\nsystemctl status nginx\n\nexact: uptime\nprefix: journalctl -u nginx\r\nprefix: ls\nuptime\n" +
		"prefix+options: df\nprefix: find /srv\nprefix: tar -tf\nprefix: git log\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Fatalf("rules %v", rs)
	}
	allowed := []string{"systemctl status nginx", "uptime", "journalctl -u nginx", "ls", "ls /var/log", "ls a-b c_d",
		"df -h", "df --output=source /", "find /srv /srv/www", "tar -tf backup.tar", "git log main"}
	refused := []string{
		// Issue 18, item 8: options added to a prefix rule (8 of 8 passed).
		"journalctl -u nginx --since=-1h -n 50", "journalctl -u nginx --vacuum-time=1s", "ls -la /var/log", "ls /x -R",
		"find /srv -delete", "find /srv -name x -exec rm", "tar -tf x.tar --checkpoint=1 --checkpoint-action=exec=id",
		"git log --output=/home/u/.bashrc", "git log -p",
		"systemctl status nginx ", "systemctl restart nginx", "uptime; id", "journalctl -u nginxx",
		"ls; rm -rf ~", "ls && id", "ls $(id)", "ls `id`", "ls | sh", "ls > /etc/passwd", "ls *", "ls ~root",
		"ls 'a b'", "ls \"$HOME\"", "ls\nid", "ls # x", "ls \\; id", "ls -la\tx", "lsblk", "",
	}
	for _, c := range allowed {
		if !rs.Allows(c) {
			t.Errorf("refused %q", c)
		}
	}
	for _, c := range refused {
		if rs.Allows(c) {
			t.Errorf("allowed %q", c)
		}
	}
	back, err := ParseRules(rs.String())
	if err != nil || back.String() != rs.String() {
		t.Fatalf("round trip: %v\n%s", err, back.String())
	}
	if !(Rules{}).Allows("anything at all; id") {
		t.Fatal("no rules must allow every command (each still needs approval)")
	}
	if rs.HasPrefixRules() != true || (Rules{{Kind: RuleExact, Command: "uptime"}}).HasPrefixRules() {
		t.Fatal("HasPrefixRules")
	}
	for _, bad := range []string{"prefix:", "prefix+options:", "exact:   ", "ls \u202e", "ls \x1b[2J", "ls\u200b"} {
		if _, err := ParseRules(bad); !errors.Is(err, ErrRule) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func TestCheckCommand(t *testing.T) {
	for _, ok := range []string{"ls", "echo 'a\tb'\nid", "printf 'héllo wörld ✓'"} {
		if err := CheckCommand(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "   ", "ls\x00", "ls\r", "echo \x1b]0;x\x07", "rm -rf / \u202e#", "ls\u200b", "a\u2028b", "\xff", strings.Repeat("a", MaxCommandLen+1), "ls \ue000"} {
		err := CheckCommand(bad)
		if !errors.Is(err, ErrCommand) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func hashed(name string) string {
	salt := []byte("0123456789abcdef0123")
	m := hmac.New(sha1.New, salt)
	m.Write([]byte(name))
	return "|1|" + base64.StdEncoding.EncodeToString(salt) + "|" + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestFromKnownHosts(t *testing.T) {
	a, _ := GenerateEd25519("")
	b, _ := GenerateEd25519("")
	c, _ := GenerateEd25519("")
	ka := strings.Join(strings.Fields(a.Public)[:2], " ")
	kb := strings.Join(strings.Fields(b.Public)[:2], " ")
	kc := strings.Join(strings.Fields(c.Public)[:2], " ")
	file := strings.Join([]string{
		"# comment",
		"web1.example.com,10.0.0.5 " + ka,
		hashed("[web1.example.com]:2222") + " " + kb,
		"@cert-authority *.example.com " + kc,
		"@revoked web1.example.com " + kc,
		"*.example.com,!web1.example.com " + kc,
		"garbage line",
		"[web1.example.com]:2222 " + kb + " dup",
	}, "\n")
	pins, skipped, err := FromKnownHosts([]byte(file), "web1.example.com", 22)
	if err != nil || len(pins) != 1 || pins[0].String() != ka || skipped != 3 {
		t.Fatalf("port 22: %v %d %v", pins, skipped, err)
	}
	pins, _, err = FromKnownHosts([]byte(file), "WEB1.example.com", 2222)
	if err != nil || len(pins) != 1 || pins[0].String() != kb {
		t.Fatalf("port 2222 (hashed): %v %v", pins, err)
	}
	pins, _, _ = FromKnownHosts([]byte(file), "db.example.com", 22)
	if len(pins) != 1 || pins[0].String() != kc {
		t.Fatalf("wildcard: %v", pins)
	}
	if pins, _, _ := FromKnownHosts([]byte(file), "other.test", 22); len(pins) != 0 {
		t.Fatalf("unrelated host got %v", pins)
	}
}

func TestParsePins(t *testing.T) {
	a, _ := GenerateEd25519("")
	ka := strings.Join(strings.Fields(a.Public)[:2], " ")
	pins, err := ParsePins("# ssh-keyscan\nhost.example " + ka + "\n" + a.Public + "\n")
	if err != nil || len(pins) != 1 || pins[0].String() != ka {
		t.Fatalf("%v %v", pins, err)
	}
	for _, bad := range []string{"", "# only a comment", "@cert-authority * " + ka, "ssh-dss AAAAB3NzaC1kc3MAAACBAP", "hello world"} {
		if _, err := ParsePins(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckAddress(t *testing.T) {
	for _, ok := range []string{"web1.example.com", "10.0.0.5", "::1", "localhost", "my_host"} {
		if CheckAddress(ok) != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "root@web1", "web1:22", "-oProxyCommand=x", "a b", "web..x", "[::1]"} {
		if CheckAddress(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCastIsAsciicastV2(t *testing.T) {
	var buf bytes.Buffer
	c, err := NewCast(&buf, CastHeader{Command: "uptime", Title: "deploy@web1"}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	c.Input([]byte("in"))
	c.Output([]byte("h\xc3"))
	c.Output([]byte("\xa9llo\n"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var h CastHeader
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Version != 2 || h.Command != "uptime" || h.Timestamp != 1700000000 {
		t.Fatalf("header %s: %v", lines[0], err)
	}
	var out string
	for _, l := range lines[1:] {
		var ev []any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("event %s: %v", l, err)
		}
		if ev[1] == "o" {
			out += ev[2].(string)
		}
	}
	if out != "héllo\n" {
		t.Fatalf("output %q: a split UTF-8 sequence was broken", out)
	}
}

// "read-only " before a rule's kind marks it as one that only reads; a bare
// line that starts with the word stays an exact command. ReadsOnly is
// true only for what a marked rule allows, and never without rules.
func TestReadOnlyRules(t *testing.T) {
	rs, err := ParseRules("read-only prefix: journalctl -u nginx\nread-only exact: uptime\nexact: systemctl restart nginx\nread-only rm -rf /tmp/x\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 || !rs[0].ReadOnly || !rs[1].ReadOnly || rs[2].ReadOnly || rs[3].ReadOnly || rs[3].Command != "read-only rm -rf /tmp/x" {
		t.Fatalf("rules %+v", rs)
	}
	for cmd, reads := range map[string]bool{
		"journalctl -u nginx": true, "journalctl -u nginx --since=today": false, "journalctl -u nginx today": true,
		"uptime": true, "systemctl restart nginx": false, "rm -rf /tmp/x": false, "journalctl -u nginx; rm x": false,
	} {
		if got := rs.ReadsOnly(cmd); got != reads {
			t.Errorf("ReadsOnly(%q) = %v", cmd, got)
		}
	}
	if again, err := ParseRules(rs.String()); err != nil || again.String() != rs.String() {
		t.Fatalf("the text form does not read back: %v\n%s", err, again.String())
	}
	if (Rules{}).ReadsOnly("uptime") {
		t.Fatal("no rules said a command only reads")
	}
}
