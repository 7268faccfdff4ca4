package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
)

// TeamService is bound to the UI as window.go.app.TeamService: the Team
// view. Every machine sees its membership and when it last synced; a lead
// also reads the team database (backend/team's Lead: machines, every row
// with the Inventory's filters, witnessed checkpoints, revocation
// requests), asks a machine to revoke a row, and exports the rows as the
// Inventory exports its own. Each lead call logs in with the machine's
// role from the vault and logs out when done: nothing the database said is
// kept, so an unreachable database shows nothing rather than something
// stale.
type TeamService struct {
	vault   *vault.Vault
	dataDir string
	log     *slog.Logger
	// syncer is the running syncer, nil while this Yett shares nothing.
	syncer func() *team.Syncer
	// save writes an export where the person chooses, through the
	// Inventory's save dialog.
	save func(title, name string, b []byte) (ExportResult, error)

	announce  *announcer // EventTeamChanged
	unsub     func()
	mu        sync.Mutex
	following *team.Syncer // the syncer whose status is followed
	unfollow  func()
}

// EventTeamChanged has no payload: the membership changed (joined, left),
// the vault locked or unlocked, or the syncer's status moved (connected,
// synced); the UI reads the status again.
const EventTeamChanged = "team:changed"

// teamEventSpacing bounds how often the syncer's status moves reach the
// window: it changes with every record queued and sent.
const teamEventSpacing = time.Second

func newTeamService(v *vault.Vault, dataDir string, syncer func() *team.Syncer, inv *InventoryService, events *eventSink, log *slog.Logger) *TeamService {
	s := &TeamService{vault: v, dataDir: dataDir, log: log, syncer: syncer, save: inv.save}
	s.announce = newAnnouncer(teamEventSpacing, func() { events.send(EventTeamChanged, nil) })
	// The keeper subscribed to the vault first and starts or stops the
	// syncer in its turn, so the syncer read here is the new one.
	s.unsub = v.Subscribe(func(e vault.Event) {
		if e.Kind != vault.EventChanged || strings.HasPrefix(string(e.Change), "team_") {
			s.follow()
			s.announce.changed()
		}
	})
	s.follow()
	return s
}

// follow subscribes to the running syncer's status, if it is another one
// than before.
func (s *TeamService) follow() {
	sy := s.syncer()
	s.mu.Lock()
	defer s.mu.Unlock()
	if sy == s.following {
		return
	}
	if s.unfollow != nil {
		s.unfollow()
		s.unfollow = nil
	}
	s.following = sy
	if sy != nil {
		s.unfollow = sy.Subscribe(func(team.Status) { s.announce.changed() })
	}
}

func (s *TeamService) close() {
	if s == nil {
		return
	}
	s.unsub()
	s.mu.Lock()
	if s.unfollow != nil {
		s.unfollow()
		s.unfollow = nil
	}
	s.mu.Unlock()
	s.announce.close()
}

// teamTimeout bounds one call's work at the team database.
const teamTimeout = 30 * time.Second

// teamPageSize is how many rows a page of the Team view holds.
const teamPageSize = 100

var (
	errNoTeamHere = shown("This machine is in no team: yett team create, or yett team join.")
	errNotLead    = shown("Only a lead reads the whole team; this machine is a member.")
)

// credentials reads the membership from the vault; the caller wipes it.
func (s *TeamService) credentials() (*team.Credentials, error) {
	c, err := team.Load(s.vault.Team())
	switch {
	case errors.Is(err, vault.ErrNoTeam):
		return nil, errNoTeamHere
	case errors.Is(err, vault.ErrLocked), errors.Is(err, vault.ErrNotInitialised):
		return nil, shown("Unlock the vault to see the team.")
	case err != nil:
		return nil, s.publicError("read the team membership", err)
	}
	return c, nil
}

// Status says whether this machine is in a team, as what, and when what
// it shares last reached the team database.
func (s *TeamService) Status() (TeamStatusView, error) {
	c, err := s.credentials()
	if errors.Is(err, errNoTeamHere) || (err != nil && s.vault.Status().State != vault.StateUnlocked) {
		return TeamStatusView{}, nil
	}
	if err != nil {
		return TeamStatusView{}, err
	}
	defer c.Wipe()
	if sy := s.syncer(); sy != nil {
		return teamStatusView(sy.Status(), c, true), nil
	}
	st, err := team.ReadStatus(s.dataDir, c)
	if err != nil {
		s.log.Warn("read the team outbox", "err", err)
	}
	v := teamStatusView(st, c, false)
	v.Problem = "This Yett does not share with the team now."
	return v, nil
}

// lead logs in as this machine's lead role for one call.
func (s *TeamService) lead(ctx context.Context, do func(*team.Lead) error) error {
	c, err := s.credentials()
	if err != nil {
		return err
	}
	defer c.Wipe()
	if !c.Lead() {
		return errNotLead
	}
	l, err := team.OpenLead(ctx, c)
	if err != nil {
		return s.publicError("open the team database", err)
	}
	defer l.Close()
	return s.publicError("read the team database", do(l))
}

// Machines lists every member's machines, removed ones too.
func (s *TeamService) Machines() ([]TeamMachineView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	out := []TeamMachineView{}
	err := s.lead(ctx, func(l *team.Lead) error {
		ms, err := l.Machines(ctx)
		for _, m := range ms {
			out = append(out, teamMachineView(m))
		}
		return err
	})
	return out, err
}

func rowFilter(f TeamFilter) team.RowFilter {
	return team.RowFilter{Filter: inventory.Filter{Text: f.Text, State: f.State}, Machine: f.Machine}
}

// Rows reads one page of the team's rows that pass the filter, by name,
// from cursor ("" for the first page; each page names the next).
func (s *TeamService) Rows(f TeamFilter, cursor string) (TeamRowsPage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	page := TeamRowsPage{Rows: []TeamRowView{}}
	err := s.lead(ctx, func(l *team.Lead) error {
		rf := rowFilter(f)
		rf.After, rf.Limit = cursor, teamPageSize
		rows, next, err := l.Rows(ctx, rf)
		for _, r := range rows {
			page.Rows = append(page.Rows, teamRowView(r))
		}
		page.Next = next
		return err
	})
	return page, err
}

// Checkpoints lists each machine's newest audit checkpoint and what a
// witness cosigned of it.
func (s *TeamService) Checkpoints() ([]TeamCheckpointView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	out := []TeamCheckpointView{}
	err := s.lead(ctx, func(l *team.Lead) error {
		cps, err := l.Checkpoints(ctx)
		for _, c := range cps {
			out = append(out, teamCheckpointView(c))
		}
		return err
	})
	return out, err
}

// Requests lists the revocation requests, newest first, with their
// outcome.
func (s *TeamService) Requests() ([]TeamRequestView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	out := []TeamRequestView{}
	err := s.lead(ctx, func(l *team.Lead) error {
		reqs, err := l.Requests(ctx)
		for _, r := range reqs {
			out = append(out, teamRequestView(r))
		}
		return err
	})
	return out, err
}

// RequestRevocation asks machine to revoke its row, for reason; the
// window asks the person to confirm first. The machine acts at once when
// it is connected, and when it next connects otherwise.
func (s *TeamService) RequestRevocation(machine, rowID, reason string) (TeamRequestView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), teamTimeout)
	defer cancel()
	var v TeamRequestView
	err := s.lead(ctx, func(l *team.Lead) error {
		r, err := l.RequestRevocation(ctx, machine, rowID, reason)
		v = teamRequestView(r)
		return err
	})
	return v, err
}

// Export saves every team row that passes the filter (all pages) as CSV
// or JSON where the person chooses. Rows hold no secret and no token, so
// neither does the file.
func (s *TeamService) Export(format string, f TeamFilter) (ExportResult, error) {
	if format != inventory.FormatCSV && format != inventory.FormatJSON {
		return ExportResult{}, shown("Export as CSV or JSON.")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*teamTimeout)
	defer cancel()
	var b []byte
	var name string
	err := s.lead(ctx, func(l *team.Lead) error {
		var err error
		b, err = l.Export(ctx, rowFilter(f), format)
		return err
	})
	if err != nil {
		return ExportResult{}, err
	}
	name = fmt.Sprintf("yett-team-inventory-%s.%s", time.Now().UTC().Format("2006-01-02"), format)
	return s.save("Export the team's inventory", name, b)
}

// teamTexts: backend/team's documented errors say what, never with what
// (no address, password or role's secret).
var teamTexts = []known{
	{err: team.ErrNotLead}, {err: team.ErrNotFound}, {err: team.ErrInvalid},
}

func (s *TeamService) publicError(what string, err error) error {
	if errors.Is(err, team.ErrUnreachable) {
		// "team: the team database cannot be reached: no connection to
		// the server": the reason after the colon is chosen words.
		why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), team.ErrUnreachable.Error()), ": ")
		msg := "The team database cannot be reached"
		if why != "" {
			msg += " (" + why + ")"
		}
		return shown(msg + "; showing nothing rather than something stale.")
	}
	return publicError(s.log, "team: "+what, err, teamTexts)
}
