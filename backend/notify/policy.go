package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/yettdev/yett/backend/approval"
)

// Policy is the person's choice of which cards a notification may answer.
// A card it does not allow gets a notification that only opens the card in
// the window, and an answer from a notification is refused by the broker
// (approval.ErrWindowOnly), not merely not offered.
type Policy struct {
	// SessionCards: session cards may be answered from a notification.
	SessionCards bool `json:"session_cards"`
	// CallCards: per-call cards may be, except those in WindowOnly.
	CallCards bool `json:"call_cards"`
	// WindowOnly names the sensitive credentials and operations (their
	// approval.Request.Ref: a credential id, or "operation:<name>") whose
	// per-call cards are answered only in the window.
	WindowOnly []string `json:"window_only"`
}

// DefaultPolicy: session cards and per-call cards may be answered from a
// notification; nothing is marked sensitive yet.
func DefaultPolicy() Policy {
	return Policy{SessionCards: true, CallCards: true, WindowOnly: []string{}}
}

// Clone is p with its own WindowOnly.
func (p Policy) Clone() Policy {
	p.WindowOnly = append([]string{}, p.WindowOnly...)
	return p
}

// Allows reports whether a notification may answer r.
func (p Policy) Allows(r approval.Request) bool {
	if r.Kind == approval.KindAccess {
		return false // answered where the person can add what it asks for
	}
	if r.Kind == approval.KindSession {
		return p.SessionCards
	}
	return p.CallCards && !slices.Contains(p.WindowOnly, r.Ref)
}

// AnswerPolicy is p as the broker enforces it: answers from a
// notification to a card p does not allow are refused.
func AnswerPolicy(current func() Policy) approval.AnswerPolicy {
	return func(r approval.Request, surface string) error {
		if surface == approval.SurfaceNotification && !current().Allows(r) {
			return approval.ErrWindowOnly
		}
		return nil
	}
}

// PolicyFile is where a data directory keeps its Policy.
const PolicyFile = "notifications.json"

// maxWindowOnly bounds the sensitive list (a credential or operation each).
const maxWindowOnly = 4096

// LoadPolicy reads dir's policy; DefaultPolicy when there is none yet.
func LoadPolicy(dir string) (Policy, error) {
	b, err := os.ReadFile(filepath.Join(dir, PolicyFile))
	if errors.Is(err, os.ErrNotExist) {
		return DefaultPolicy(), nil
	}
	if err != nil {
		return DefaultPolicy(), err
	}
	p := DefaultPolicy()
	if err := json.Unmarshal(b, &p); err != nil {
		return DefaultPolicy(), fmt.Errorf("notify: %s is not a notification policy", PolicyFile)
	}
	if err := p.Check(); err != nil {
		return DefaultPolicy(), err
	}
	return p, nil
}

// Check validates p (and makes a nil WindowOnly empty).
func (p *Policy) Check() error {
	if p.WindowOnly == nil {
		p.WindowOnly = []string{}
	}
	if len(p.WindowOnly) > maxWindowOnly {
		return fmt.Errorf("notify: a policy names at most %d sensitive credentials and operations", maxWindowOnly)
	}
	for _, ref := range p.WindowOnly {
		if ref == "" || len(ref) > 512 {
			return errors.New("notify: a sensitive credential or operation is named by its id")
		}
	}
	return nil
}

// SavePolicy writes p to dir durably: a temporary file, synced, renamed
// over the old one, and the directory synced, so a crash leaves the old
// policy or the new one.
func SavePolicy(dir string, p Policy) error {
	if err := p.Check(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".notifications-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, PolicyFile)); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // not supported on every OS; the rename stands either way
		d.Close()
	}
	return nil
}
