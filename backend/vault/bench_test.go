package vault

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// BenchmarkUnlock measures one passphrase unlock (KDF, unwrap, verify,
// epoch commit) at DefaultKDF and at nearby candidates.
func BenchmarkUnlock(b *testing.B) {
	candidates := []KDFParams{
		DefaultKDF,
		{Time: 2, MemKiB: 64 * 1024, Threads: 2},
		{Time: 1, MemKiB: 256 * 1024, Threads: 4},
	}
	for _, kdf := range candidates {
		b.Run(kdf.String(), func(b *testing.B) {
			o := testOptions(newFakeClock())
			o.KDF = kdf
			v, _ := newUnlocked(b, o)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				v.Lock("bench")
				b.StartTimer()
				if err := v.Unlock(pass(testPass)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecord compares sealing and opening one 300-byte record with
// the raw AEAD on the same bytes, so the ratio shows the vault's overhead
// (associated data, envelope, per-operation cipher setup).
func BenchmarkRecord(b *testing.B) {
	k := fuzzKeys()
	ref := recordRef{ID: "cred_0123456789abcdef01234567", Kind: kindCredential, Version: 3}
	pt := bytes.Repeat([]byte("x"), 300)
	sealed := sealRecord(k, fuzzVaultID, ref, pt)
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(int64(len(pt)))
		for i := 0; i < b.N; i++ {
			sealRecord(k, fuzzVaultID, ref, pt)
		}
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(int64(len(pt)))
		for i := 0; i < b.N; i++ {
			if _, err := openRecord(k, fuzzVaultID, ref, sealed); err != nil {
				b.Fatal(err)
			}
		}
	})
	aead, _ := chacha20poly1305.NewX(k.record)
	nonce := make([]byte, nonceLen)
	raw := aead.Seal(nil, nonce, pt, nil)
	b.Run("baseline-raw-xchacha-seal", func(b *testing.B) {
		b.SetBytes(int64(len(pt)))
		for i := 0; i < b.N; i++ {
			aead.Seal(nil, nonce, pt, nil)
		}
	})
	b.Run("baseline-raw-xchacha-open", func(b *testing.B) {
		b.SetBytes(int64(len(pt)))
		for i := 0; i < b.N; i++ {
			if _, err := aead.Open(nil, nonce, raw, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpenUnlockList1000 opens a vault holding 1,000 credentials,
// unlocks it (verifying every record) and lists them. It uses the cheap
// test KDF so the figure is the per-record cost; add BenchmarkUnlock's
// KDF time for the real total.
func BenchmarkOpenUnlockList1000(b *testing.B) {
	v, dir := newUnlocked(b, testOptions(newFakeClock()))
	for i := 0; i < 1000; i++ {
		c := sampleCredential(fmt.Sprintf("cred %04d", i), fmt.Sprintf("CANARY-bench-%d", i))
		c.Hosts = []string{fmt.Sprintf("api%d.example.com", i)}
		if _, err := v.Credentials().Add(c); err != nil {
			b.Fatal(err)
		}
	}
	v.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := Open(dir, testOptions(newFakeClock()))
		if err != nil {
			b.Fatal(err)
		}
		if err := v.Unlock(pass(testPass)); err != nil {
			b.Fatal(err)
		}
		list, err := v.Credentials().List()
		if err != nil || len(list) != 1000 {
			b.Fatal(len(list), err)
		}
		b.StopTimer()
		v.Close()
		b.StartTimer()
	}
}

// BenchmarkSecretOf is what a call pays to read its credential's secret
// (one authenticated decryption and the secret's decode), against the
// full decode and validation of the same record (what unlock does once).
func BenchmarkSecretOf(b *testing.B) {
	v, _ := newUnlocked(b, testOptions(newFakeClock()))
	view, err := v.Credentials().Add(NewCredential{
		Name: "bench", Secret: NewSecret(bytes.Repeat([]byte("s"), 40)), Injection: Injection{Format: InjectBearer},
		Hosts: []string{"api.example.com", "*.example.org:8443"}, PathPrefixes: []string{"/v1/"}, Approval: ApprovalSession,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("secret-of", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s, err := v.Credentials().SecretOf(view.ID, view.Version)
			if err != nil {
				b.Fatal(err)
			}
			s.Wipe()
		}
	})
	c := v.Credentials()
	c.mu.Lock()
	pt, err := openRecord(c.keys, c.hdr.VaultID, c.refs[view.ID], c.creds[view.ID].sealed)
	c.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline-full-decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, s, err := decodeCredential(view.ID, view.Version, pt); err != nil {
				b.Fatal(err)
			} else {
				s.Wipe()
			}
		}
	})
}
