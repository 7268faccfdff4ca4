package approval

import (
	"fmt"
	"time"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/procid"
)

// Continuity is what a session card says changed: the short Change, and a
// sentence about this program's other runs. It is built from the gateway's
// own records, never from anything the client says.
type Continuity struct {
	Change Change
	Detail string
}

// OwnAuthorityEnded reports whether the change ended authority this very
// process held (the vault locked or unlocked, the gateway restarted, its
// identity changed): the seed's REAUTH_REQUIRED cases. A new process of a
// program, or a reconnect after a revoke or a closed connection, is asked
// like a first request instead.
func (c Continuity) OwnAuthorityEnded() bool {
	switch c.Change {
	case ChangeVaultLocked, ChangeGatewayRestarted, ChangeIdentityChanged:
		return true
	}
	return false
}

// ChangeFor says what changed for a run that has no valid session, from the
// sessions of this boot: those of this very process (same pid and kernel
// start stamp) first, then those of other processes running the same
// executable, ended or live. ok is false when this boot knows nothing about
// the process or its executable.
func (b *Broker) ChangeFor(run *procid.RunRecord) (Continuity, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	exe := run.ExeHash()
	for i := len(b.history) - 1; i >= 0; i-- {
		h := b.history[i]
		if h.pid != run.PID || h.startKey != run.StartKey {
			continue
		}
		switch {
		case h.exe != exe || h.reason == audit.ReasonIdentityMismatch:
			return Continuity{Change: ChangeIdentityChanged, Detail: identityChange(h, run, exe)}, true
		case h.reason == audit.ReasonVaultStateChanged || h.reason == audit.ReasonVaultLocked:
			return Continuity{Change: ChangeVaultLocked, Detail: fmt.Sprintf(
				"this process's approval ended at %s when the vault was locked or unlocked", clock(h.at))}, true
		case h.reason == audit.ReasonRevoked:
			return Continuity{Change: ChangeRevoked, Detail: fmt.Sprintf("this process's session was revoked at %s", clock(h.at))}, true
		default:
			return Continuity{Change: ChangeReconnected, Detail: fmt.Sprintf(
				"this process's earlier connection ended at %s (%s)", clock(h.at), endedWords(h.reason))}, true
		}
	}
	var earlier *endedRun
	for i := len(b.history) - 1; i >= 0; i-- {
		if b.history[i].exe == exe {
			earlier = &b.history[i]
			break
		}
	}
	var live *Session
	for _, s := range b.sessions {
		if s.Run.ExeHash() == exe && (live == nil || s.ApprovedAt.After(live.ApprovedAt)) {
			live = s
		}
	}
	switch {
	case earlier != nil && live != nil:
		return Continuity{Change: ChangeAnotherRun, Detail: fmt.Sprintf(
			"another run of this program (pid %d, approved at %s) is live, and an earlier one (pid %d) ended at %s (%s). This is a separate process",
			live.Run.PID, clock(live.ApprovedAt), earlier.pid, clock(earlier.at), endedWords(earlier.reason))}, true
	case earlier != nil:
		return Continuity{Change: ChangeAgentRestarted, Detail: fmt.Sprintf(
			"an earlier run of this program (pid %d) ended at %s (%s). This is a new process",
			earlier.pid, clock(earlier.at), endedWords(earlier.reason))}, true
	case live != nil:
		return Continuity{Change: ChangeAnotherRun, Detail: fmt.Sprintf(
			"another run of this program (pid %d, approved at %s) is live. This is a separate process",
			live.Run.PID, clock(live.ApprovedAt))}, true
	}
	return Continuity{}, false
}

// identityChange says exactly what changed in a process that was approved
// before (h) and is inspected again now (run): the program it runs, or the
// command line of the same program. Both come from Yett's own inspections.
func identityChange(h endedRun, run *procid.RunRecord, exe string) string {
	switch {
	case h.exe != exe && h.exePath != run.ExePath:
		return fmt.Sprintf("this process (pid %d) was approved at %s running %s; it now runs another program, %s",
			run.PID, clock(h.at), h.exePath, run.ExePath)
	case h.exe != exe:
		return fmt.Sprintf("this process (pid %d) was approved at %s running %s; the program it runs now has other content (another version)",
			run.PID, clock(h.at), run.ExePath)
	case h.cmdLine != run.CmdLine:
		return fmt.Sprintf("this process (pid %d) was approved at %s running %q; it now runs the same program with another command line, %q",
			run.PID, clock(h.at), h.cmdLine, run.CmdLine)
	}
	return fmt.Sprintf("this process (pid %d) was approved at %s, and Yett found it changed since; it was inspected again", run.PID, clock(h.at))
}

func clock(t time.Time) string { return t.Local().Format("15:04:05") }

// endedWords says why a session ended, for a card.
func endedWords(r audit.Reason) string {
	switch r {
	case audit.ReasonProcessExited:
		return "it exited"
	case ReasonConnectionClosed:
		return "its connection closed"
	case audit.ReasonRevoked:
		return "its session was revoked"
	case audit.ReasonVaultLocked, audit.ReasonVaultStateChanged:
		return "the vault was locked or unlocked"
	case audit.ReasonIdentityMismatch:
		return "its identity changed"
	case audit.ReasonGatewayRestarted, ReasonGatewayStopped:
		return "Yett stopped"
	}
	return string(r)
}
