package approval

import (
	"errors"
	"time"

	"github.com/yettdev/yett/backend/ids"
	"github.com/yettdev/yett/backend/procid"
)

// Access is what an agent asks for with yett.request_access: a kind of
// thing ("http" host, "ssh" host, named "operation"), which one, and why
// (the agent's words).
type Access struct {
	Kind, Target, Reason string
}

// ErrAlreadyRefused: the person refused this run's request for the same
// thing with the same reason; it may ask again only with a new reason.
var ErrAlreadyRefused = errors.New("approval: the person refused this request already")

// AccessWords says what an access card asks for, in words.
func AccessWords(kind, target string) string {
	switch kind {
	case "http":
		return "a credential for " + target
	case "ssh":
		return "the SSH host " + target
	case "operation":
		return "the named operation " + target
	}
	return kind + " " + target
}

func accessKey(runID, kind, target string) string { return runID + "\x00" + kind + "\x00" + target }

// RequestAccess shows an access card for run, or joins the one it already
// has pending for the same thing. A request the person refused is not
// shown again for the same run and reason (ErrAlreadyRefused). The caller
// must Wait on the ticket: approved means the person says it is set up.
func (b *Broker) RequestAccess(run *procid.RunRecord, a Access) (CallTicket, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return CallTicket{}, ErrClosed
	}
	key := accessKey(RunID(run), a.Kind, a.Target)
	if reason, ok := b.refusedAccess[key]; ok && reason == a.Reason {
		b.mu.Unlock()
		return CallTicket{}, ErrAlreadyRefused
	}
	join := "access\x00" + key
	// The same request again (the agent gave up waiting, or asks twice)
	// joins the card, or takes the answer it got meanwhile.
	if p := b.joinable[join]; p != nil && p.epoch == b.cfg.Epoch() {
		return b.joinLocked(p), nil
	} else if p != nil {
		delete(b.joinable, join)
	}
	now := time.Now()
	p := &pending{
		req: Request{
			ID: ids.New("rq-"), Kind: KindAccess, RunID: RunID(run), Who: RequesterOf(run), Channel: a.Kind,
			Target: a.Target, Reason: a.Reason, CreatedAt: now, Deadline: now.Add(b.cfg.Timeout),
		},
		run: run, epoch: b.cfg.Epoch(), done: make(chan struct{}), waiters: 1,
	}
	b.addLocked(p)
	b.joinable[join] = p
	p.join = join
	b.mu.Unlock()
	b.notify(Update{Pending: true})
	return CallTicket{b, p}, nil
}
