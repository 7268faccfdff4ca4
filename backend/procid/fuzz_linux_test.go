package procid

import (
	"strings"
	"testing"
)

// FuzzParseStat: the command name in /proc/<pid>/stat is chosen by the
// process (prctl PR_SET_NAME), so the parser must not be steered by it.
func FuzzParseStat(f *testing.F) {
	f.Add("cat")
	f.Add("a) Z 1 2")
	f.Add(") ) )")
	f.Add("")
	f.Fuzz(func(t *testing.T, comm string) {
		if len(comm) > 64 || strings.ContainsAny(comm, "\n") {
			return
		}
		line := "4242 (" + comm + ") S 77 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0\n"
		p, err := parseStat(4242, []byte(line))
		if err != nil {
			t.Fatalf("parseStat(%q): %v", line, err)
		}
		if p.ppid != 77 || p.startKey != 987654 {
			t.Fatalf("comm %q steered the parse: %+v", comm, p)
		}
	})
}
