package keeper

import (
	"context"
	"net/http"
	"time"

	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/witness"
)

// LockWitnessTimeout bounds the submission of the lock's checkpoint to the
// team's witness, made while the lock is handled: a witness that does not
// answer within it holds the lock up no longer, and the checkpoint is
// submitted at the next unlock (the submitter's first try).
const LockWitnessTimeout = 3 * time.Second

// witnessHTTPTimeout bounds one request to the witness while running: a
// witness that accepts and never answers is an unreachable one.
const witnessHTTPTimeout = 30 * time.Second

// witnessing is a witness.Submitter running for this machine's audit log
// while the team syncer runs: it submits each checkpoint the log signs
// (and, at its start, the newest one, which may have waited since the last
// lock) and hands each cosigned one to the syncer. What it cosigned last is
// kept on disk (witness.StateDirFor), so a restart proves from there.
type witnessing struct {
	sub    *witness.Submitter
	cancel context.CancelFunc
	done   chan struct{}
}

// startWitnessingLocked starts submitting to the witness the membership
// names (nil: none). k.mu held, the syncer s just started.
func (k *Keeper) startWitnessingLocked(w *team.WitnessSettings, s *team.Syncer) {
	if w == nil || k.audit == nil || k.team.witnessing != nil {
		return
	}
	v, err := w.Verifier()
	if err != nil {
		k.log.Error("the team's witness key in the vault does not read; not submitting checkpoints", "err", err)
		return
	}
	sub := &witness.Submitter{
		Dir:    k.dir,
		Client: &witness.Client{URL: w.URL, Witness: v, HTTP: &http.Client{Timeout: witnessHTTPTimeout}},
		Log:    k.audit, Retry: k.cfg.WitnessRetry, Logger: k.log,
		Refused: s.PublishRefusal,
		Cosigned: func(cosigned []byte) {
			if err := s.PublishCosigned(cosigned); err != nil {
				k.log.Warn("a cosigned checkpoint could not be queued for the team", "err", err)
			}
		},
	}
	// A cosignature kept on disk whose publication a crash or a stop cut
	// short goes out now; the outbox and the database keep one of each.
	if held := sub.Latest(); held != nil {
		sub.Cosigned(held)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws := &witnessing{sub: sub, cancel: cancel, done: make(chan struct{})}
	log := k.audit
	go func() {
		defer close(ws.done)
		sub.Run(ctx, log)
	}()
	k.team.witnessing = ws
}

// stopWitnessingLocked stops the submitter. At a lock (final) the lock's
// checkpoint, just signed, is submitted first, for at most
// LockWitnessTimeout; what does not get through waits in the log for the
// next start. k.mu held, the syncer still running.
func (k *Keeper) stopWitnessingLocked(final bool) {
	ws := k.team.witnessing
	if ws == nil {
		return
	}
	k.team.witnessing = nil
	ws.cancel()
	<-ws.done
	if !final {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), LockWitnessTimeout)
	defer cancel()
	if _, err := ws.sub.Submit(ctx); err != nil {
		k.log.Warn("the lock's audit checkpoint was not cosigned by the team's witness; it is submitted at the next unlock", "err", err)
	}
}
