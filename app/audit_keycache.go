package app

import (
	"bytes"
	"strings"
	"sync"

	"filippo.io/age"
)

// fileKeyCache makes re-reading the log cheap while the vault stays
// unlocked. Every entry is its own age file, whose key is unwrapped with an
// X25519 operation (about 4,000 entries/s on 2 cores); the views are rebuilt
// from the whole log whenever it grows, so without this a long log would
// cost seconds per rebuild. An unwrapped file key opens one entry only, and
// entries hold no secret, so keeping them is no worse than keeping the views;
// they are wiped at every lock all the same, so a locked app holds nothing
// that decrypts the log. The private key itself is not kept here: it is
// fetched from the vault for each read and dropped after it.
type fileKeyCache struct {
	mu   sync.Mutex
	keys map[string][]byte
}

func (c *fileKeyCache) wipe() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.keys {
		clear(k)
	}
	c.keys = nil
}

// identity wraps id so that known entries skip the X25519 unwrap.
func (c *fileKeyCache) identity(id age.Identity) age.Identity {
	return &cachingIdentity{cache: c, id: id}
}

type cachingIdentity struct {
	cache *fileKeyCache
	id    age.Identity
}

func (ci *cachingIdentity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	key := stanzaKey(stanzas)
	c := ci.cache
	c.mu.Lock()
	fk, ok := c.keys[key]
	c.mu.Unlock()
	if ok {
		return bytes.Clone(fk), nil
	}
	fk, err := ci.id.Unwrap(stanzas)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[string][]byte{}
	}
	c.keys[key] = bytes.Clone(fk)
	c.mu.Unlock()
	return fk, nil
}

// stanzaKey names an entry's recipient stanzas. The X25519 stanza carries
// a fresh ephemeral share per encryption, so it differs for every entry.
func stanzaKey(stanzas []*age.Stanza) string {
	var b strings.Builder
	for _, s := range stanzas {
		b.WriteString(s.Type)
		for _, a := range s.Args {
			b.WriteByte(0)
			b.WriteString(a)
		}
		b.WriteByte(1)
		b.Write(s.Body)
		b.WriteByte(2)
	}
	return b.String()
}
