package gateway

import (
	"context"
	"encoding/hex"
	"os/user"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/procid"
)

// recorder writes the broker's authority changes to the audit log, and the
// approved runs to the journal as evidence for later boots.
type recorder struct{ g *Gateway }

func runBinding(runID string, r *procid.RunRecord) *audit.RunBinding {
	return &audit.RunBinding{
		RunID: runID, PID: r.PID, StartTime: r.StartTime.UTC(), Executable: r.ExePath,
		ExecutableHash: hex.EncodeToString(r.ExeSHA256[:]), Signer: r.Signer, ParentPID: r.PPID,
		LaunchNonce: r.LaunchNonce.String(),
	}
}

func localUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// SessionApproved must succeed before the session takes effect: an approval
// the audit log does not hold is refused.
func (r recorder) SessionApproved(ctx context.Context, s approval.Session) error {
	g := r.g
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventSessionApproved, Time: s.ApprovedAt, BootID: s.BootID, VaultEpoch: s.VaultEpoch,
		SessionID: s.ID, ApprovalID: s.ID, Run: runBinding(s.RunID, s.Run), ApprovedBy: localUser(), Surface: s.Surface,
		Via: s.Via.Audit(),
	}); err != nil {
		g.log.Error("audit log refused a session approval", "run", s.RunID)
		return err
	}
	return g.journal.RecordRun(ctx, journal.Run{
		BootID: s.BootID, RunID: s.RunID, PID: s.Run.PID, StartKey: s.Run.StartKey, ExeSHA256: s.Run.ExeHash(),
	})
}

func (r recorder) SessionEnded(s approval.Session, reason audit.Reason) {
	g := r.g
	if _, err := g.audit.Append(context.Background(), audit.Event{
		Type: audit.EventSessionEnded, Time: time.Now().UTC(), BootID: s.BootID, VaultEpoch: g.vault.Epoch(),
		SessionID: s.ID, ApprovalID: s.ID, Run: runBinding(s.RunID, s.Run), Reason: reason,
	}); err != nil {
		g.log.Error("audit log refused a session end", "run", s.RunID)
	}
	g.log.Info("session ended", "run", s.RunID, "reason", string(reason))
}

// GrantGiven must succeed before the grant takes effect: a grant the audit
// log does not hold is refused, and its card with it.
func (r recorder) GrantGiven(ctx context.Context, gr approval.Grant) error {
	g := r.g
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventGrantGiven, Time: gr.GivenAt, BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		SessionID: gr.SessionID, ApprovalID: gr.SessionID, ApprovedBy: localUser(), Surface: gr.Via.Surface,
		Via: gr.Via.Audit(), Grant: gr.Facts(),
	}); err != nil {
		g.log.Error("audit log refused a grant", "run", gr.RunID)
		return err
	}
	return nil
}

func (r recorder) GrantEnded(gr approval.Grant, reason audit.Reason) {
	g := r.g
	if _, err := g.audit.Append(context.Background(), audit.Event{
		Type: audit.EventGrantEnded, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		SessionID: gr.SessionID, ApprovalID: gr.SessionID, Reason: reason, Grant: gr.Facts(),
	}); err != nil {
		g.log.Error("audit log refused a grant's end", "run", gr.RunID)
	}
}

func (r recorder) RequestExpired(req approval.Request) {
	g := r.g
	g.audit.Append(context.Background(), audit.Event{
		Type: audit.EventApprovalTimeout, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		SessionID: req.SessionID, Reason: audit.ReasonApprovalTimeout,
	})
}

// denied records a refused call. A denial is written even while the vault is
// locked (the log is blind-write); its failure changes nothing, the call is
// refused either way.
func (g *Gateway) denied(c *conn, a *audit.Action, sessionID string, reason audit.Reason) (entry int64) {
	b := c.current()
	ev := audit.Event{
		Type: audit.EventActionDenied, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch(),
		SessionID: sessionID, Run: runBinding(b.id, b.rec), Action: a, Reason: reason,
	}
	if c.drill {
		// Yett's own drill client: Activity tells its refused calls
		// from agents'.
		ev.Surface = audit.SurfaceDrill
	}
	entry, err := g.audit.Append(context.Background(), ev)
	if err != nil {
		g.log.Error("audit log refused a denial", "run", b.id)
		entry = -1
	}
	g.log.Info("call denied", "run", b.id, "reason", string(reason))
	return entry
}
