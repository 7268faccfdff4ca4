//go:build !windows

package procid

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// TestHashCacheKeyFollowsContent rewrites a file in place with the same
// size and its old mtime: the key still changes (ctime), so the cache
// cannot serve the old hash.
func TestHashCacheKeyFollowsContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(path, []byte("version-one"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &hashCache{}
	sum := func() ([32]byte, FileID) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		id := fileID(fi)
		h, err := c.sum(f, id)
		if err != nil {
			t.Fatal(err)
		}
		return h, id
	}
	h1, id1 := sum()
	if h1 != sha256.Sum256([]byte("version-one")) {
		t.Fatal("wrong hash")
	}
	fi, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte("version-two"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, fi.ModTime(), fi.ModTime()) // put mtime back
	h2, id2 := sum()
	if id1 == id2 {
		t.Fatal("in-place rewrite kept the same cache key")
	}
	if h2 != sha256.Sum256([]byte("version-two")) {
		t.Fatal("cache served the old hash for new content")
	}
}
