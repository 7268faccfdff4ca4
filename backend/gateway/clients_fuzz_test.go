package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzReadClients: any bytes in clients.json (a program of the same user
// can write the data directory) read as a clear error or as a list whose
// names hold no control character and stay within their bounds.
func FuzzReadClients(f *testing.F) {
	f.Add([]byte(`[{"name":"claude-code","version":"2.1","program":"claude","pid":4242,"last_call":"2026-12-03T09:41:00Z"}]`))
	f.Add([]byte(`[{"name":"a\u0007b\n","last_call":"not a time"}]`))
	f.Add([]byte(`{"name":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ClientsFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := ReadClients(dir)
		if err != nil {
			return
		}
		for _, c := range list {
			for _, s := range []struct {
				v string
				n int
			}{{c.Name, 64}, {c.Version, 32}, {c.Program, 64}} {
				if len([]rune(s.v)) > s.n {
					t.Fatalf("%q is longer than %d", s.v, s.n)
				}
				for _, r := range s.v {
					if !unicode.IsPrint(r) {
						t.Fatalf("%q holds %U", s.v, r)
					}
				}
			}
		}
		openClientBook(dir) // and a gateway starts with it
	})
}

// BenchmarkClientBookSaw is what noting the client costs a tools/call: a
// map update under a mutex and a non-blocking wake of the writer.
func BenchmarkClientBookSaw(b *testing.B) {
	book := openClientBook(b.TempDir())
	info := &mcp.Implementation{Name: "claude-code", Version: "2.1.328"}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		book.saw(info, "claude", 4242, now)
	}
}
