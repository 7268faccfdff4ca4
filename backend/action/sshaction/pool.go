package sshaction

import (
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// poolKey names what a connection may be reused for: one host record at
// one version, so an edited host (another user, address or pin) never gets
// a connection made for the record before.
type poolKey struct {
	id      string
	version uint64
	addr    string
	user    string
}

func keyOf(h Host) poolKey {
	return poolKey{id: h.ID, version: h.Version, addr: h.addr(), user: h.User}
}

// poolConn is one authenticated connection.
type poolConn struct {
	client  *xssh.Client
	host    Host
	hostKey string // fingerprint verified at the handshake
	gen     uint64 // the pool generation it was dialed in
	reused  bool
	gone    chan struct{} // closed when the connection ends
	timer   *time.Timer   // closes it after the idle timeout
}

func newPoolConn(client *xssh.Client, h Host, hostKey string, gen uint64) *poolConn {
	c := &poolConn{client: client, host: h, hostKey: hostKey, gen: gen, gone: make(chan struct{})}
	go func() { client.Wait(); close(c.gone) }()
	return c
}

// pool keeps idle connections, one command at a time on each.
type pool struct {
	mu      sync.Mutex
	idle    map[poolKey][]*poolConn
	gen     uint64
	maxIdle int
	timeout time.Duration
}

func newPool(maxIdle int, timeout time.Duration) *pool {
	return &pool{idle: map[poolKey][]*poolConn{}, maxIdle: maxIdle, timeout: timeout}
}

func (p *pool) generation() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen
}

// get takes the most recently used idle connection to h, if any is alive.
func (p *pool) get(h Host) *poolConn {
	k := keyOf(h)
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		l := p.idle[k]
		if len(l) == 0 {
			return nil
		}
		c := l[len(l)-1]
		p.idle[k] = l[:len(l)-1]
		if len(p.idle[k]) == 0 {
			delete(p.idle, k)
		}
		c.timer.Stop()
		select {
		case <-c.gone:
			continue
		default:
		}
		c.reused = true
		return c
	}
}

// put keeps c for the next command to its host, unless the pool was
// closed since c was dialed or enough connections wait already.
func (p *pool) put(c *poolConn) {
	k := keyOf(c.host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.gen != p.gen || len(p.idle[k]) >= p.maxIdle {
		c.client.Close()
		return
	}
	c.timer = time.AfterFunc(p.timeout, func() { p.expire(k, c) })
	p.idle[k] = append(p.idle[k], c)
}

func (p *pool) expire(k poolKey, c *poolConn) {
	p.mu.Lock()
	l := p.idle[k]
	for i, x := range l {
		if x == c {
			p.idle[k] = append(l[:i:i], l[i+1:]...)
			if len(p.idle[k]) == 0 {
				delete(p.idle, k)
			}
			break
		}
	}
	p.mu.Unlock()
	c.client.Close()
}

// closeAll closes every idle connection and moves to a new generation, so
// connections in use are closed when their command ends.
func (p *pool) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle = map[poolKey][]*poolConn{}
	p.gen++
	p.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			c.timer.Stop()
			c.client.Close()
		}
	}
}
