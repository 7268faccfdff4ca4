package procid

import "testing"

// BenchmarkIdentify measures what the gateway pays on Accept: peer
// credentials, the walk to the origin, inspection and the exe hash, with
// and without the hash cache. The agent binary is this test binary (tens
// of MB), so the uncached case shows the cost of hashing it.
func BenchmarkIdentify(b *testing.B) {
	f := newFixture(b)
	a := f.startAgent(b)
	for _, bc := range []struct {
		name    string
		noCache bool
	}{{"cached", false}, {"uncached", true}} {
		b.Run(bc.name, func(b *testing.B) {
			in := NewInspector()
			in.NoCache = bc.noCache
			if _, err := in.Identify(a.conn); err != nil { // warm the cache
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := in.Identify(a.conn); err != nil {
					b.Fatal(err)
				}
			}
		})
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
