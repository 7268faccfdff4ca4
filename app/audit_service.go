package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/vault"
)

// EventAuditChanged tells the UI the log grew, a verification finished,
// the writer opened or closed, or the views' index caught up; its payload
// is the log's size in records (-1 while no writer is open). It is sent at
// most once per auditEventSpacing.
const EventAuditChanged = "audit:changed"

// AuditService is bound to the UI as window.go.app.AuditService. It is the
// read side of the audit log: the keeper (backend/keeper) owns the writer,
// records the vault's lock and unlock and signs a checkpoint at every lock.
// Its views are projections of the decrypted log, read page by page from an
// index (indexCache) kept only while the vault is unlocked, and carry no
// secret (audit events have no field for one).
type AuditService struct {
	vault  *vault.Vault
	keeper auditKeeper
	events *eventSink
	log    *slog.Logger
	dir    string
	// saveDialog asks the person where to save a file; "" means cancelled.
	// The app sets it to the Wails dialog; tests to a fake.
	dialogMu   sync.Mutex
	saveDialog func(defaultName string) (string, error)

	index    indexCache // dropped at every lock
	verified verifyCache
	announce *announcer // EventAuditChanged

	// watchMu guards the writer watched and its subscription.
	watchMu  sync.Mutex
	watched  *audit.Log
	unwatch  func()
	stopWait chan struct{} // ends the wait on the watched writer's verification

	cancel func() // the vault's and the keeper's subscriptions
}

// auditKeeper is what the read side needs of the keeper: the open writer
// (its head, its background verification, a checkpoint on demand) and
// whether, and why not, the log is being written.
type auditKeeper interface {
	AuditLog() *audit.Log
	AuditDir() string
	State() keeper.State
	Subscribe(func(keeper.State)) (cancel func())
}

// auditEventSpacing is the least time between two EventAuditChanged: a
// busy gateway appends thousands of records a second, and the window reads
// its status and first page again at each event.
const auditEventSpacing = 500 * time.Millisecond

func newAuditService(v *vault.Vault, k auditKeeper, events *eventSink, log *slog.Logger, spacing time.Duration) *AuditService {
	dir := k.AuditDir()
	s := &AuditService{vault: v, keeper: k, events: events, log: log, dir: dir}
	s.announce = newAnnouncer(spacing, func() {
		size := int64(-1)
		if w := s.keeper.AuditLog(); w != nil {
			size = w.Head().Size
		}
		s.events.send(EventAuditChanged, size)
	})
	s.verified = verifyCache{maxAge: time.Minute, now: time.Now, done: s.notifyChanged}
	s.index = indexCache{dir: dir, log: log, changed: s.notifyChanged}
	s.saveDialog = func(string) (string, error) { return "", errors.New("no window to show a dialog in") }
	cancelVault := v.Subscribe(s.onVaultEvent)
	cancelKeeper := k.Subscribe(func(keeper.State) { s.watchWriter(s.keeper.AuditLog()) })
	s.cancel = func() { cancelVault(); cancelKeeper() }
	s.watchWriter(k.AuditLog())
	return s
}

// watchWriter follows w, the writer open now (nil: none): its durable
// records and the end of its background verification reach the UI, with
// no polling. The keeper tells us when the writer changes (its feed); a
// change of writer is itself news to the UI.
func (s *AuditService) watchWriter(w *audit.Log) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if w == s.watched {
		return
	}
	if s.unwatch != nil {
		s.unwatch()
		close(s.stopWait)
		s.unwatch, s.stopWait = nil, nil
	}
	s.watched = w
	s.announce.changed()
	if w == nil {
		return
	}
	s.unwatch = w.Subscribe(s.announce.changed)
	stop := make(chan struct{})
	s.stopWait = stop
	go func() {
		select {
		case <-w.Verified():
			s.announce.changed()
		case <-stop:
		}
	}()
}

// onVaultEvent keeps the views' index to the vault's state: wiped at every
// lock (saved encrypted first), dropped at a reset (its file goes aside with
// the log). It runs in the vault's delivery, in order.
func (s *AuditService) onVaultEvent(e vault.Event) {
	switch e.Kind {
	case vault.EventReset, vault.EventRestored:
		// A restore may bring another vault's audit key: its log starts
		// afresh, like after a reset.
		s.index.drop()
	case vault.EventLocked:
		s.index.wipe()
	}
}

// notifyChanged tells the UI, without waiting, that a verification or the
// index finished.
func (s *AuditService) notifyChanged() { s.announce.changed() }

// close stops watching the vault, the keeper and the log.
func (s *AuditService) close() {
	if s == nil {
		return
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.watchWriter(nil)
	s.announce.close()
	s.index.wipe()
	s.verified.wait()
}

func (s *AuditService) logPath() string { return filepath.Join(s.dir, audit.LogFile) }

// Status says whether the log verifies (no key needed) and whether the app
// records. It never waits for a verification: "verifying" until the first
// one is done (the writer's own, which Open leaves running in the
// background), then the last result while a newer one runs.
func (s *AuditService) Status() AuditStatus {
	w, problem := s.keeper.AuditLog(), s.keeper.State().AuditProblem
	writing := w != nil
	if _, err := os.Stat(s.logPath()); errors.Is(err, os.ErrNotExist) && !writing {
		return AuditStatus{State: "absent", FirstBad: -1, Notes: []string{}}
	}
	var v audit.Verification
	if writing {
		v = w.Verification()
	}
	var st AuditStatus
	switch {
	case v.Running:
		st = verifyingStatus(w.Head())
	case writing && v.Report.Status != audit.StatusIntact:
		// The log stopped itself: it refuses every append now.
		st, writing = statusFromReport(v.Report), false
		problem = "The audit log failed verification and Yett stopped writing to it. Nothing in it was repaired or removed."
	default:
		if writing {
			s.verified.seed(v.Report)
		}
		if rep, have := s.verified.status(s.dir); have {
			st = statusFromReport(rep)
		} else {
			st = verifyingStatus(audit.Head{})
		}
	}
	st.Writing, st.Problem = writing, problem
	return st
}

// reader fetches the audit identity and reads the index with it. ok is false
// while the vault is locked; note says why a view is empty or incomplete.
func (s *AuditService) reader(f func(x *activity.Index)) (ok bool, note string) {
	id, err := s.vault.AuditIdentity()
	switch {
	case errors.Is(err, vault.ErrLocked), errors.Is(err, vault.ErrNotInitialised):
		return false, "Unlock the vault to read the log."
	case err != nil:
		s.log.Error("audit identity", "err", err)
		return false, "The vault's audit key cannot be read, so the log cannot be shown."
	}
	if _, err := os.Stat(s.logPath()); errors.Is(err, os.ErrNotExist) {
		return true, ""
	}
	// id goes out of scope when this returns: nothing here keeps the
	// private key (the index's own key is derived from it and wiped at lock).
	if err := s.index.read(id, func(x *activity.Index, n string) { note = n; f(x) }); err != nil {
		s.log.Error("audit index", "err", err)
		return true, "The log cannot be read right now."
	}
	return true, note
}

// Sessions returns one page of the sessions the log records, newest first.
func (s *AuditService) Sessions(p PageRequest) SessionsView {
	out := SessionsView{Sessions: []LoggedSession{}}
	out.Readable, out.Note = s.reader(func(x *activity.Index) {
		page := x.Sessions(activity.Page{Before: p.Before, Limit: p.Limit})
		for _, sess := range page.Sessions {
			out.Sessions = append(out.Sessions, loggedSessionView(sess))
		}
		out.More, out.Next = page.More, page.Next
	})
	return out
}

// Activity returns one page of the calls and authority events matching f,
// newest first.
func (s *AuditService) Activity(f ActivityFilter) (ActivityView, error) {
	af := activity.Filter{SessionID: f.SessionID, Channel: f.Channel, Class: activity.Class(f.Class)}
	for _, p := range []struct {
		text string
		dst  *time.Time
	}{{f.From, &af.From}, {f.To, &af.To}} {
		if p.text == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, p.text)
		if err != nil {
			return ActivityView{Items: []ActivityItem{}}, shown("The time range is not a valid date and time.")
		}
		*p.dst = t
	}
	out := ActivityView{Items: []ActivityItem{}}
	out.Readable, out.Note = s.reader(func(x *activity.Index) {
		page := x.Activity(af, activity.Page{Before: f.Before, Limit: f.Limit})
		for _, it := range page.Items {
			out.Items = append(out.Items, loggedActivityItem(it))
		}
		out.More, out.Next = page.More, page.Next
	})
	return out, nil
}

// ExportCheckpoint signs the current tree head and lets the person save the
// checkpoint somewhere else. Kept apart from this machine, it later proves
// the log was not cut short or rewritten (yett audit verify --checkpoint).
func (s *AuditService) ExportCheckpoint() (CheckpointExport, error) {
	if w := s.keeper.AuditLog(); w != nil {
		if _, err := w.Checkpoint(); err != nil { // cover every entry written so far
			s.log.Error("audit checkpoint", "err", err)
		}
	}
	s.dialogMu.Lock()
	saveDialog := s.saveDialog
	s.dialogMu.Unlock()
	rep := audit.Verify(s.logPath(), audit.VerifyOptions{})
	if rep.Status != audit.StatusIntact {
		return CheckpointExport{}, shown("The audit log does not verify, so a checkpoint of it would prove nothing.")
	}
	b, err := os.ReadFile(filepath.Join(s.dir, audit.CheckpointFile))
	if err != nil {
		return CheckpointExport{}, shown("There is no signed checkpoint yet.")
	}
	cp, err := audit.ParseCheckpoint(b)
	if err != nil {
		return CheckpointExport{}, shown("The stored checkpoint is not valid.")
	}
	name := fmt.Sprintf("yett-audit-checkpoint-%d.txt", cp.Size)
	path, err := saveDialog(name)
	if err != nil {
		s.log.Error("save dialog", "err", err)
		return CheckpointExport{}, shown("The save dialog could not be shown.")
	}
	if path == "" {
		return CheckpointExport{Saved: false, Size: cp.Size, TreeHead: cp.Head.String()}, nil
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.log.Error("write checkpoint", "err", err)
		return CheckpointExport{}, shown("The checkpoint could not be saved there.")
	}
	return CheckpointExport{Saved: true, Path: path, Size: cp.Size, TreeHead: cp.Head.String()}, nil
}

// wailsSaveDialog is the only code here that needs a window.
func wailsSaveDialog(ctx context.Context) func(string) (string, error) {
	return func(name string) (string, error) {
		return runtime.SaveFileDialog(ctx, runtime.SaveDialogOptions{
			Title:           "Save audit checkpoint",
			DefaultFilename: name,
		})
	}
}

func tornNote(t *audit.Torn) string {
	return fmt.Sprintf("An interrupted write left %d bytes after entry %d; they are set aside when the log is next opened. Earlier entries are intact.", t.Length, t.AfterIndex)
}

func (s *AuditService) setSaveDialog(f func(string) (string, error)) {
	s.dialogMu.Lock()
	s.saveDialog = f
	s.dialogMu.Unlock()
}
