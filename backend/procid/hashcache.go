package procid

import (
	"crypto/sha256"
	"io"
	"os"
	"sync"
)

// hashCache remembers executable hashes by FileID. Hashing a 100 MB agent
// binary on every connection would cost tens of milliseconds; the key says
// when the answer can be reused:
//
//   - Dev and Ino: the same file object, wherever it is linked from (and a
//     replaced file, even at the same path, has a new inode);
//   - Size, Mtime and Ctime: its content was not rewritten in place. On
//     Linux a running executable cannot be opened for writing (ETXTBSY) at
//     all; the time stamps cover the moments it is not running and file
//     systems where that rule does not hold. Ctime cannot be set back by
//     the user, unlike mtime.
type hashCache struct {
	mu sync.Mutex
	m  map[FileID][32]byte
}

const hashCacheMax = 1024

// sum returns the SHA-256 of f, whose identity is id, from the cache or by
// reading f from the start.
func (c *hashCache) sum(f *os.File, id FileID) ([32]byte, error) {
	if c != nil {
		c.mu.Lock()
		h, ok := c.m[id]
		c.mu.Unlock()
		if ok {
			return h, nil
		}
	}
	var h [32]byte
	d := sha256.New()
	if _, err := io.Copy(d, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return h, err
	}
	copy(h[:], d.Sum(nil))
	if c != nil {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= hashCacheMax {
			c.m = make(map[FileID][32]byte) // crude but bounded: start over
		}
		c.m[id] = h
		c.mu.Unlock()
	}
	return h, nil
}
