// Package instance keeps Yett to one desktop app per user and lets a second
// launch bring the first one to the front, and `yett quit` ask it to quit.
//
// Wails' own single-instance lock uses D-Bus on Linux and silently does
// nothing without a session bus, so Yett uses its own: an exclusive lock on a
// file in the user's private runtime directory decides which process is the
// primary, and the primary listens on a Unix socket next to it for "focus"
// requests. A second launch that fails to take the lock connects to the
// socket, asks for focus and exits. The lock is held by the kernel, so a
// crashed primary never leaves a stale lock behind; a stale socket file is
// simply replaced by the next primary.
//
// Both files live in a 0700 directory, so only the same user can reach them.
package instance

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/filelock"
)

// ErrAlreadyRunning is returned by Acquire when another instance holds the
// lock; the other instance has been asked to show its window.
var ErrAlreadyRunning = errors.New("instance: Yett is already running")

// ErrNotRunning is returned by RequestQuit when no instance holds the lock.
var ErrNotRunning = errors.New("instance: Yett is not running")

const (
	focusRequest = "focus\n"
	quitRequest  = "quit\n"
)

// Primary is the lock held by the running instance.
type Primary struct {
	lock     *os.File
	listener net.Listener
	wg       sync.WaitGroup

	mu     sync.Mutex
	onQuit func()
}

// OnQuit sets what a quit request (`yett quit`) does; until it is set, quit
// requests are refused.
func (p *Primary) OnQuit(fn func()) {
	p.mu.Lock()
	p.onQuit = fn
	p.mu.Unlock()
}

// Acquire takes the single-instance lock in dir (which must exist and be
// private). If another instance holds it, Acquire asks that instance to
// focus and returns ErrAlreadyRunning. onFocus is called, from another
// goroutine, each time a later launch asks the primary to show itself.
func Acquire(dir, name string, onFocus func()) (*Primary, error) {
	lockPath := filepath.Join(dir, name+".lock")
	sockPath := filepath.Join(dir, name+".sock")
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("instance: open lock: %w", err)
	}
	locked, err := filelock.TryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("instance: lock: %w", err)
	}
	if !locked {
		f.Close()
		if err := askFocus(sockPath); err != nil {
			return nil, fmt.Errorf("%w (could not ask it to show its window: %v)", ErrAlreadyRunning, err)
		}
		return nil, ErrAlreadyRunning
	}
	// We own the lock, so any socket file left here belongs to a dead
	// primary and can be replaced.
	_ = os.Remove(sockPath)
	l, err := net.Listen("unix", sockPath)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("instance: listen: %w", err)
	}
	_ = os.Chmod(sockPath, 0o600)
	p := &Primary{lock: f, listener: l}
	p.wg.Add(1)
	go p.serve(onFocus)
	return p, nil
}

func (p *Primary) serve(onFocus func()) {
	defer p.wg.Done()
	for {
		c, err := p.listener.Accept()
		if err != nil {
			return
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		p.mu.Lock()
		onQuit := p.onQuit
		p.mu.Unlock()
		switch {
		case line == focusRequest:
			_, _ = c.Write([]byte("ok\n"))
			if onFocus != nil {
				onFocus()
			}
		case line == quitRequest && onQuit != nil:
			_, _ = c.Write([]byte("ok\n"))
			// Quitting ends in Release, which waits for this goroutine.
			go onQuit()
		}
		c.Close()
	}
}

// Release stops listening and drops the lock.
func (p *Primary) Release() {
	p.listener.Close()
	p.wg.Wait()
	filelock.Unlock(p.lock)
	p.lock.Close()
}

// RequestQuit asks the instance holding dir's lock to quit, and waits
// until it has (its lock is released) or timeout passes. ErrNotRunning
// when there is none.
func RequestQuit(dir, name string, timeout time.Duration) error {
	lockPath := filepath.Join(dir, name+".lock")
	if !held(lockPath) {
		return ErrNotRunning
	}
	if err := ask(filepath.Join(dir, name+".sock"), quitRequest); err != nil {
		return fmt.Errorf("instance: asking Yett to quit: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for held(lockPath) {
		if time.Now().After(deadline) {
			return fmt.Errorf("instance: Yett was asked to quit and is still running after %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// held reports whether another process holds the lock at path.
func held(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	locked, err := filelock.TryLock(f)
	if err != nil {
		return false
	}
	if locked {
		filelock.Unlock(f)
		return false
	}
	return true
}

func askFocus(sockPath string) error { return ask(sockPath, focusRequest) }

func ask(sockPath, request string) error {
	c, err := net.DialTimeout("unix", sockPath, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(request)); err != nil {
		return err
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if reply != "ok\n" {
		return fmt.Errorf("unexpected reply %q", reply)
	}
	return nil
}
