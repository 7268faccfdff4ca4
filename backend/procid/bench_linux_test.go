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

// BenchmarkMatches is the per-call re-check of a run binding (it runs
// before every call), side by side with what it cost before records kept
// the process open (issue 10: at most 20 µs, then 70-160 µs):
//
//	before:    the re-check as it was: /proc/<pid>/stat read twice, the
//	           executable opened and stat'ed, the path stat'ed; no command
//	           line check.
//	kept-open: Matches on a record from Identify: a pidfd poll, a stat of
//	           the exe link through the kept /proc/<pid> handle, one read of
//	           the kept cmdline file, a stat of the path.
//	reopened:  Matches on a record whose handles are closed: it opens them
//	           for the one check.
func BenchmarkMatches(b *testing.B) {
	f := newFixture(b)
	a := f.startAgent(b)
	in := NewInspector()
	rec, err := in.Identify(a.conn)
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	closed := *rec
	closed.live = nil
	for _, bc := range []struct {
		name  string
		check func() error
	}{
		{"before", func() error { return matchesBefore(in, rec) }},
		{"kept-open", func() error { return in.Matches(rec) }},
		{"reopened", func() error { return in.Matches(&closed) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.check(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// matchesBefore is Matches as it was before issue 10, kept only as the
// benchmark's baseline.
func matchesBefore(in *Inspector, rec *RunRecord) error {
	live, err := readProc(rec.PID)
	if err != nil {
		return err
	}
	if live.startKey != rec.StartKey {
		return ErrPIDReused
	}
	f, _, id, err := openExe(rec.PID)
	if err != nil {
		return err
	}
	defer f.Close()
	if !id.sameFile(rec.ExeID) {
		return ErrExeChanged
	}
	if id != rec.ExeID {
		sum, err := in.hashes().sum(f, id)
		if err != nil || sum != rec.ExeSHA256 {
			return ErrExeChangedOnDisk
		}
	}
	onDisk, err := statPath(rec.ExePath)
	if err != nil || onDisk != rec.ExeID {
		return ErrExeChangedOnDisk
	}
	if again, err := readProc(rec.PID); err != nil || again.startKey != rec.StartKey {
		return ErrProcessGone
	}
	return nil
}
