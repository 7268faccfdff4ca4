//go:build windows || (darwin && cgo)

package lockwatch

import "sync"

// callbacks maps the plain integers we hand to OS callback APIs back to
// watchers. OS callbacks cannot carry Go pointers, and callback trampolines
// are created once per process, so each finds its watcher here.
type callbacks struct {
	mu   sync.RWMutex
	m    map[uintptr]*Watcher
	last uintptr
}

// add registers w under a fresh id.
func (c *callbacks) add(w *Watcher) uintptr {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last++
	c.put(c.last, w)
	return c.last
}

// put registers w under an id the OS chose (a window handle); c.mu held.
func (c *callbacks) put(id uintptr, w *Watcher) {
	if c.m == nil {
		c.m = make(map[uintptr]*Watcher)
	}
	c.m[id] = w
}

// set is put for callers not holding c.mu.
func (c *callbacks) set(id uintptr, w *Watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(id, w)
}

// remove forgets id. Taking the write lock waits out any callback still
// inside with, so once remove returns no onLock call for id is running or
// will start.
func (c *callbacks) remove(id uintptr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// with runs f on the watcher registered under id, if any.
func (c *callbacks) with(id uintptr, f func(*Watcher)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if w := c.m[id]; w != nil {
		f(w)
	}
}
