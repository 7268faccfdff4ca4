package vault

import (
	"errors"
	"github.com/yettdev/yett/backend/target"
	"sync"
	"testing"
	"time"
)

// testKDF keeps tests fast; BenchmarkUnlock measures the real parameters.
var testKDF = KDFParams{Time: 1, MemKiB: 64, Threads: 1}

const testPass = "correct horse battery staple"

func pass(s string) Passphrase { return Passphrase([]byte(s)) }

// fakeClock is a settable clock plus AfterFunc whose timers fire only when
// the test calls fire.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{d: d, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// fireLatest fires the most recently armed live timer, as if its time came.
func (c *fakeClock) fireLatest() bool {
	c.mu.Lock()
	var t *fakeTimer
	for i := len(c.timers) - 1; i >= 0; i-- {
		if !c.timers[i].stopped {
			t = c.timers[i]
			break
		}
	}
	if t != nil {
		t.stopped = true
	}
	c.mu.Unlock()
	if t == nil {
		return false
	}
	t.f()
	return true
}

func testOptions(c *fakeClock) Options {
	o := Options{KDF: testKDF, ThrottleBase: time.Second}
	if c != nil {
		o.Now, o.AfterFunc = c.Now, c.AfterFunc
	}
	return o
}

func openVault(t testing.TB, dir string, o Options) *Vault {
	t.Helper()
	v, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func newUnlocked(t testing.TB, o Options) (*Vault, string) {
	t.Helper()
	dir := t.TempDir()
	v := openVault(t, dir, o)
	if err := v.Create(pass(testPass), false); err != nil {
		t.Fatal(err)
	}
	return v, dir
}

func sampleCredential(name, secret string) NewCredential {
	return NewCredential{
		Name:      name,
		Secret:    NewSecret([]byte(secret)),
		Injection: Injection{Format: InjectBearer},
		Hosts:     []string{"api.example.com"},
		Approval:  ApprovalSession,
	}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds() []EventKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []EventKind
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

// credentialAndSecret is what the gateway does for a call: choose the
// credential, then read its secret.
func credentialAndSecret(v *Vault, t target.URL) (CredentialView, *Secret, error) {
	view, err := v.Credentials().For(t)
	if err != nil {
		return CredentialView{}, nil, err
	}
	s, err := v.Credentials().SecretOf(view.ID, view.Version)
	if err != nil {
		return CredentialView{}, nil, err
	}
	return view, s, nil
}

// auditKeyRefOf returns the id of the vault's audit key record.
func auditKeyRefOf(v *Vault) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ref, ok := auditKeyRef(v.refs)
	if !ok {
		return "", errors.New("no audit key record")
	}
	return ref.ID, nil
}
