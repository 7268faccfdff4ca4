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

	"filippo.io/age"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/vault"
)

// EventAuditChanged tells the UI the log grew, a verification finished or
// the views' index caught up; its payload is the number of records. It is
// sent at most once per change-watch interval.
const EventAuditChanged = "audit:changed"

// AuditService is bound to the UI as window.go.app.AuditService. It owns the
// app's audit log writer: it opens <data>/audit with the vault's audit
// recipient, records vault lock and unlock, and signs a checkpoint at every
// lock and at shutdown (which also ends the writer's segment: its key is
// wiped). Its views are projections of the decrypted log, read page by page
// from an index (indexCache) kept only while the vault is unlocked, and
// carry no secret (audit events have no field for one).
type AuditService struct {
	vault  *vault.Vault
	events *eventSink
	log    *slog.Logger
	dir    string
	// saveDialog asks the person where to save a file; "" means cancelled.
	// The app sets it to the Wails dialog; tests to a fake.
	saveDialog func(defaultName string) (string, error)

	index    indexCache // dropped at every lock
	verified verifyCache
	changed  chan struct{} // a verification or the index finished: tell the UI

	mu        sync.Mutex
	w         *audit.Log // nil while not open
	recipient string     // the recipient w encrypts to
	problem   string     // public text: why the app is not recording
	cancel    func()
	stop      chan struct{}
	done      chan struct{}
}

// auditPollInterval is how often the service looks for new records to
// announce; it is also the throttle on EventAuditChanged.
const auditPollInterval = 500 * time.Millisecond

func newAuditService(v *vault.Vault, events *eventSink, log *slog.Logger, dir string, poll time.Duration) *AuditService {
	s := &AuditService{vault: v, events: events, log: log, dir: dir, stop: make(chan struct{}), done: make(chan struct{}),
		changed: make(chan struct{}, 1)}
	s.verified = verifyCache{maxAge: time.Minute, now: time.Now, done: s.notifyChanged}
	s.index = indexCache{dir: dir, log: log, changed: s.notifyChanged}
	s.saveDialog = func(string) (string, error) { return "", errors.New("no window to show a dialog in") }
	s.mu.Lock()
	s.openLocked()
	s.mu.Unlock()
	s.cancel = v.Subscribe(s.onVaultEvent)
	go s.watch(poll)
	return s
}

// openLocked opens the log if the vault has an audit key. If the vault has
// none yet (not set up), it stays closed until Create. s.mu held.
func (s *AuditService) openLocked() {
	// Once the log was refused (or could not be set aside at a reset), the
	// app does not retry behind the banner's back: a restart does.
	if s.w != nil || s.problem != "" {
		return
	}
	recipient, err := s.vault.AuditRecipient()
	if errors.Is(err, vault.ErrNoAuditKey) {
		return
	}
	if err != nil {
		s.problem = "The audit log is not being written: the vault's audit key cannot be read."
		s.log.Error("audit recipient", "err", err)
		return
	}
	r, err := age.ParseX25519Recipient(recipient)
	if err != nil {
		s.problem = "The audit log is not being written: the vault's audit key is malformed."
		return
	}
	w, _, err := audit.Open(audit.Options{Dir: s.dir, Recipient: r})
	switch {
	case errors.Is(err, audit.ErrTampered):
		// Never repaired: the evidence stays as found, and nothing is
		// appended after it.
		s.problem = "The audit log failed verification and is not being written to. It was left exactly as found."
	case errors.Is(err, audit.ErrLocked):
		s.problem = "The audit log is not being written by this window: another Yett process holds it."
	case err != nil:
		s.problem = "The audit log could not be opened, so nothing is being recorded."
		s.log.Error("open audit log", "err", err)
	default:
		s.w, s.recipient, s.problem = w, recipient, ""
	}
}

// onVaultEvent records lock and unlock. It runs in the vault's delivery, in
// order, never under the vault's mutex.
func (s *AuditService) onVaultEvent(e vault.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Kind {
	case vault.EventCreated:
		s.reopenIfKeyChanged()
		s.appendLocked(audit.Event{Type: audit.EventVaultUnlocked, VaultEpoch: e.Epoch, Reason: "vault_created"})
	case vault.EventUnlocked:
		// The unlock authenticated the recipient. A vault made before audit
		// keys got one just now; and if the recipient differs from the one
		// the log was opened with (read while locked, unauthenticated), the
		// entries written since were sealed to someone else's key.
		if s.w != nil {
			if r, err := s.vault.AuditRecipient(); err == nil && r != s.recipient {
				s.log.Error("the audit recipient changed under a locked vault; reopening the log with the authenticated one")
				s.closeLocked()
				s.problem = ""
				s.openLocked()
				s.problem = "The audit key changed while the vault was locked: entries written before this unlock may not be readable."
			}
		}
		s.openLocked()
		s.appendLocked(audit.Event{Type: audit.EventVaultUnlocked, VaultEpoch: e.Epoch})
	case vault.EventReset:
		s.index.drop() // its file goes aside with the log
		s.setAsideLocked()
	case vault.EventLocked:
		s.index.wipe()
		s.appendLocked(audit.Event{Type: audit.EventVaultLocked, VaultEpoch: e.Epoch, Reason: audit.Reason(e.Reason)})
		// Also ends the writer's segment: a process that reads this one's
		// memory from now on finds no key to anything written before.
		s.checkpointLocked()
	}
}

// notifyChanged asks the watch loop to tell the UI, without waiting.
func (s *AuditService) notifyChanged() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// setAsideLocked: a vault reset sets the old vault file aside, and with it
// the only key that decrypts this log. The log is set aside beside it, as
// it is (never rewritten), and the next Create starts a new one. s.mu held.
func (s *AuditService) setAsideLocked() {
	s.closeLocked()
	if _, err := os.Stat(s.dir); err != nil {
		return
	}
	aside := fmt.Sprintf("%s.reset-%d", s.dir, time.Now().Unix())
	if err := os.Rename(s.dir, aside); err != nil {
		s.problem = "The vault was reset but the old audit log could not be set aside; nothing is being recorded."
		s.log.Error("set aside audit log", "err", err)
		return
	}
	s.problem = ""
}

// reopenIfKeyChanged: after a reset and a new Create the vault has a new
// audit key; later entries must be readable with it. s.mu held.
func (s *AuditService) reopenIfKeyChanged() {
	if s.w != nil {
		if r, err := s.vault.AuditRecipient(); err == nil && r != s.recipient {
			s.closeLocked()
		}
	}
	s.openLocked()
}

func (s *AuditService) appendLocked(e audit.Event) {
	if s.w == nil {
		return
	}
	e.Time = time.Now().UTC()
	if _, err := s.w.Append(context.Background(), e); err != nil {
		s.problem = "Writing to the audit log failed; entries are not being recorded until Yett restarts."
		s.log.Error("audit append", "type", e.Type, "err", err)
	}
}

func (s *AuditService) checkpointLocked() {
	if s.w == nil {
		return
	}
	if _, err := s.w.Checkpoint(); err != nil {
		s.log.Error("audit checkpoint", "err", err)
	}
}

func (s *AuditService) closeLocked() {
	if s.w != nil {
		if err := s.w.Close(); err != nil { // signs a final checkpoint
			s.log.Error("close audit log", "err", err)
		}
		s.w = nil
	}
}

// close stops watching the vault and closes the log with a final checkpoint.
func (s *AuditService) close() {
	if s == nil {
		return
	}
	if s.cancel != nil {
		s.cancel()
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
		<-s.done
	}
	s.mu.Lock()
	s.closeLocked()
	s.mu.Unlock()
	s.index.wipe()
	s.verified.wait()
}

// watch announces growth of the log, whoever appended (the app or, later,
// the gateway through the same writer), and the end of a verification or of
// background indexing, at most once per interval.
func (s *AuditService) watch(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	var last int64 = -1
	changed, verifying := false, false
	for {
		select {
		case <-s.stop:
			return
		case <-s.changed:
			changed = true
			continue
		case <-t.C:
		}
		s.mu.Lock()
		size, running := int64(-1), false
		if s.w != nil {
			size, running = s.w.Head().Size, s.w.Verification().Running
		}
		s.mu.Unlock()
		// The writer's background verification ending changes the status.
		if verifying && !running {
			changed = true
		}
		if (size >= 0 && size != last && last >= 0) || changed {
			s.events.send(EventAuditChanged, size)
		}
		if size >= 0 {
			last = size
		}
		changed, verifying = false, running
	}
}

func (s *AuditService) logPath() string { return filepath.Join(s.dir, audit.LogFile) }

// Status says whether the log verifies (no key needed) and whether the app
// records. It never waits for a verification: "verifying" until the first
// one is done (the writer's own, which Open leaves running in the
// background), then the last result while a newer one runs.
func (s *AuditService) Status() AuditStatus {
	s.mu.Lock()
	w, problem := s.w, s.problem
	s.mu.Unlock()
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
			return ActivityView{Items: []ActivityItem{}}, errors.New("The time range is not a valid date and time.")
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
	s.mu.Lock()
	s.checkpointLocked() // cover every entry written so far
	saveDialog := s.saveDialog
	s.mu.Unlock()
	rep := audit.Verify(s.logPath(), audit.VerifyOptions{})
	if rep.Status != audit.StatusIntact {
		return CheckpointExport{}, errors.New("The audit log does not verify, so a checkpoint of it would prove nothing.")
	}
	b, err := os.ReadFile(filepath.Join(s.dir, audit.CheckpointFile))
	if err != nil {
		return CheckpointExport{}, errors.New("There is no signed checkpoint yet.")
	}
	cp, err := audit.ParseCheckpoint(b)
	if err != nil {
		return CheckpointExport{}, errors.New("The stored checkpoint is not valid.")
	}
	name := fmt.Sprintf("yett-audit-checkpoint-%d.txt", cp.Size)
	path, err := saveDialog(name)
	if err != nil {
		s.log.Error("save dialog", "err", err)
		return CheckpointExport{}, errors.New("The save dialog could not be shown.")
	}
	if path == "" {
		return CheckpointExport{Saved: false, Size: cp.Size, TreeHead: cp.Head.String()}, nil
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		s.log.Error("write checkpoint", "err", err)
		return CheckpointExport{}, errors.New("The checkpoint could not be saved there.")
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
	s.mu.Lock()
	s.saveDialog = f
	s.mu.Unlock()
}

// writer is the open log, for the gateway when the app runs it in-process
// (gateway.Config.Audit): one writer per log, since the log refuses a second.
// nil while the log is not open. A vault reset closes it; callers must ask
// again after one.
func (s *AuditService) writer() *audit.Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w
}
