package vault

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/target"
)

// Fuzz targets for every decoder of persisted vault data and of binding
// input. Seeds are valid encodings; the properties are "no panic" and,
// where a decoder accepts, that re-encoding gives the same bytes.

var fuzzVaultID = [vaultIDLen]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func fuzzKeys() *sessionKeys { return deriveSessionKeys(bytes.Repeat([]byte{7}, keyLen), fuzzVaultID) }

func FuzzDecodeHeader(f *testing.F) {
	h := &header{VaultID: fuzzVaultID, KDF: DefaultKDF, Salt: bytes.Repeat([]byte{9}, 32)}
	h.Wrapped = wrapKey(bytes.Repeat([]byte{1}, keyLen), bytes.Repeat([]byte{2}, keyLen), passphraseWrapAD(h))
	f.Add(h.encode())
	f.Add([]byte(headerMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := decodeHeader(data)
		if err != nil {
			return
		}
		if !bytes.Equal(h.encode(), data) {
			t.Fatalf("header does not round-trip")
		}
	})
}

func FuzzUnwrapKey(f *testing.F) {
	kek := bytes.Repeat([]byte{1}, keyLen)
	ad := keyringWrapAD(fuzzVaultID)
	f.Add(wrapKey(kek, bytes.Repeat([]byte{2}, keyLen), ad))
	f.Add(make([]byte, wrappedLen))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := unwrapKey(kek, data, ad)
		if err == nil && len(key) != keyLen {
			t.Fatalf("unwrapped a %d-byte key", len(key))
		}
	})
}

func FuzzOpenRecord(f *testing.F) {
	k := fuzzKeys()
	ref := recordRef{ID: "cred_1", Kind: kindCredential, Version: 1}
	f.Add(sealRecord(k, fuzzVaultID, ref, []byte(`{"name":"x"}`)), "cred_1", kindCredential, uint64(1))
	f.Add([]byte{envelopeV1}, "settings", kindSettings, uint64(2))
	f.Fuzz(func(t *testing.T, sealed []byte, id, kind string, version uint64) {
		if len(id) > maxIDLen || len(kind) > maxKindLen {
			return
		}
		openRecord(k, fuzzVaultID, recordRef{ID: id, Kind: kind, Version: version}, sealed)
	})
}

func FuzzDecodeManifest(f *testing.F) {
	k := fuzzKeys()
	f.Add(encodeManifest(k, fuzzVaultID, &manifest{Epoch: 3, Records: []recordRef{
		{ID: "cred_a", Kind: kindCredential, Version: 1}, {ID: settingsID, Kind: kindSettings, Version: 4},
	}}))
	f.Add(encodeManifest(k, fuzzVaultID, &manifest{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, body, mac, err := decodeManifest(data)
		if err != nil {
			return
		}
		if !bytes.Equal(m.body(), body) || len(mac) != macLen {
			t.Fatalf("manifest does not round-trip")
		}
	})
}

func FuzzParseHostPattern(f *testing.F) {
	for _, s := range []string{"api.example.com", "*.example.com:8443", "[::1]:80", "127.0.0.1", "*.com", "a..b", "x:0"} {
		f.Add(s, "api.example.com:443")
	}
	f.Fuzz(func(t *testing.T, pattern, request string) {
		p, err := ParseHostPattern(pattern)
		if err == nil {
			again, err := ParseHostPattern(p.String())
			if err != nil || again != p {
				t.Fatalf("%q -> %q does not re-parse to itself: %v", pattern, p.String(), err)
			}
		}
		if u, err := target.Parse("https://" + request + "/"); err == nil {
			p.match(bindingHost(u), u.Port)
		}
		// A request to the pattern's own host reaches it: the binding and
		// the request URL are read alike.
		if err == nil && !p.Wildcard {
			if u, err := target.Parse("https://" + p.String() + "/"); err == nil {
				if _, ok := p.match(bindingHost(u), u.Port); !ok {
					t.Fatalf("pattern %q does not match a request to itself (%s)", p, u)
				}
			}
		}
	})
}

func FuzzParsePathPrefix(f *testing.F) {
	for _, s := range []string{"/", "/v1", "/v1/", "/a/../b", "v1", "/x?y"} {
		f.Add(s, "/v1/users")
	}
	f.Fuzz(func(t *testing.T, prefix, path string) {
		p, err := ParsePathPrefix(prefix)
		if err != nil {
			return
		}
		if !pathMatch(p, p) {
			t.Fatalf("prefix %q does not match itself", p)
		}
		pathMatch(p, path)
	})
}

func FuzzDecodeCredential(f *testing.F) {
	c, _ := sampleCredential("seed", "CANARY-fuzz").validate()
	f.Add(encodeCredential(c, credentialTimes{created: time.Unix(0, 0), updated: time.Unix(1, 0), secretSet: time.Unix(1, 0)}))
	f.Add([]byte(`{"name":"x","secret":"AA==","injection":{"format":"header","header_name":"X","template":"{secret}"},"hosts":["a.b"],"approval":"per_call"}`))
	f.Add([]byte(`{"name":"x","secret":"AA==","injection":{"format":"bearer"},"hosts":["a.b"],"approval":"session","rotate_every_days":90}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		view, secret, err := decodeCredential("cred_x", 1, data)
		if err != nil {
			return
		}
		if secret.Len() == 0 || len(view.Hosts) == 0 || len(view.PathPrefixes) == 0 {
			t.Fatalf("accepted an incomplete credential: %+v", view)
		}
		if view.RotateEveryDays < 0 || view.RotateEveryDays > MaxRotateEveryDays || (view.RotateEveryDays == 0) != view.RotationDueAt.IsZero() {
			t.Fatalf("accepted a rotation reminder of %d days (due %v)", view.RotateEveryDays, view.RotationDueAt)
		}
	})
}

func FuzzDecodeSettings(f *testing.F) {
	f.Add([]byte(`{"auto_lock_after_ns":3600000000000}`))
	f.Add([]byte(`{"auto_lock_after_ns":3600000000000,"last_backup_at":"2026-01-02T03:04:05Z","last_backup_path":"/b.yettbackup","backup_reminder_days":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeSettings(data)
		if err == nil && checkAutoLock(s.AutoLockAfter) != nil {
			t.Fatal("accepted an out-of-range auto-lock time")
		}
		if err == nil && s.BackupReminderDays != nil && checkBackupReminder(*s.BackupReminderDays) != nil {
			t.Fatal("accepted an out-of-range backup reminder")
		}
	})
}

func FuzzDecodeMCPServer(f *testing.F) {
	seed, _ := json.Marshal(serverRecordOf(sampleServer("everything"), time.Unix(0, 0)))
	f.Add(seed)
	f.Add([]byte(`{"name":"r","transport":"http","url":"https://mcp.example.com/mcp","secrets":{"Authorization":"QmVhcmVyIHg="},"approval":"writes"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeMCPServer(data)
		if err != nil {
			return
		}
		defer r.wipe()
		// What decodes is what Add would accept: it validates again.
		v := r.view("mcp_x", 1)
		if !mcpServerNameRe.MatchString(v.Name) || (v.Transport == TransportStdio) == (v.URL != "") {
			t.Fatalf("accepted an invalid server: %+v", v)
		}
	})
}
