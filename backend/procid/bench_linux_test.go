package procid

import (
	"os"
	"testing"
)

// BenchmarkIdentify measures what the gateway pays on Accept: peer
// credentials, the walk to the origin, inspection and the exe hash, with
// and without the hash cache. The agent is this test binary, as built
// (a few MB) and padded to 128 MiB, the size of a bundled Node agent.
func BenchmarkIdentify(b *testing.B) {
	for _, size := range []struct {
		name string
		pad  int64
	}{{"test-binary", 0}, {"128MiB", 128 << 20}} {
		f := newFixture(b)
		if size.pad > 0 {
			// Trailing bytes after an ELF image do not stop it running.
			if err := os.Truncate(f.agentBin, size.pad); err != nil {
				b.Fatal(err)
			}
		}
		a := f.startAgent(b)
		for _, bc := range []struct {
			name    string
			noCache bool
		}{{"cached", false}, {"uncached", true}} {
			b.Run(size.name+"/"+bc.name, func(b *testing.B) {
				in := NewInspector()
				in.NoCache = bc.noCache
				if _, err := in.Identify(a.conn); err != nil { // warm the cache
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := in.Identify(a.conn); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMatches is the per-call re-check of a run binding.
func BenchmarkMatches(b *testing.B) {
	f := newFixture(b)
	a := f.startAgent(b)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := in.Matches(rec); err != nil {
			b.Fatal(err)
		}
	}
}
