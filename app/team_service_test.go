//go:build unix

package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

const (
	teamSecretCanary = "CANARY-team-view-http-secret-3e8a"
	teamAdminCanary  = "CANARY-team-view-admin-password-c41f"
)

// waitTeam polls cond for up to 60 s: the syncers share on their own
// time; a generous bound, never a figure.
func waitTeam(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// teamApps is a team of two desktop apps on a real PostgreSQL: lea's, the
// founding lead, and mia's, a member holding two credentials whose
// secrets are canaries, one with an owner and a backup revoker.
func teamApps(t *testing.T) (pg *pgtest.Server, lea, mia *oauthApp) {
	t.Helper()
	pg = pgtest.Start(t)
	admin, name := pg.OwnedDatabase(t, teamAdminCanary)
	db := team.Database{Host: pg.Host, Port: pg.Port, Name: name, SSLMode: "disable"}
	lea, mia = newOAuthApp(t), newOAuthApp(t)
	lea.create(t)
	mia.create(t)
	ctx := context.Background()
	pw := vault.NewSecret([]byte(teamAdminCanary))
	c, err := team.Create(ctx, team.CreateRequest{Database: db, AdminRole: admin, AdminPassword: &pw,
		Name: "platform", Member: "lea", Hostname: "lea-laptop", Version: "test"}, team.Keep(lea.vault.Team()))
	if err != nil {
		t.Fatal(err)
	}
	adm, err := team.OpenAdmin(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := adm.Invite(ctx, "mia", team.KindMember, time.Hour)
	adm.Close()
	c.Wipe()
	if err != nil {
		t.Fatal(err)
	}
	code := inv.Code()
	parsed, err := team.ParseCode(code.Bytes())
	code.Wipe()
	if err != nil {
		t.Fatal(err)
	}
	m, err := team.Join(ctx, &parsed, "mia-desktop", "test", team.Keep(mia.vault.Team()))
	if err != nil {
		t.Fatal(err)
	}
	m.Wipe()
	for _, cred := range []NewCredentialForm{
		{Name: "deploy hook", Secret: teamSecretCanary + "-1", Format: "bearer", Hosts: []string{"deploy.example.com"}, Approval: "session",
			Owner: "mia", BackupRevoker: "bob", Environment: "production"},
		{Name: "status page", Secret: teamSecretCanary + "-2", Format: "bearer", Hosts: []string{"status.example.com"}, Approval: "session"},
	} {
		if _, err := mia.Vault.AddCredential(cred); err != nil {
			t.Fatal(err)
		}
	}
	return pg, lea, mia
}

// TestTeamServiceAsLead drives the bound Team service of a lead's app
// against a real PostgreSQL and a member's app: the status of both, the
// machines, the member's rows with the Inventory's filters and pages, a
// revocation request named where it waits and with whom, then answered,
// the checkpoints, both exports, and words when the database is gone. No
// view, export, event or log carries a canary secret.
func TestTeamServiceAsLead(t *testing.T) {
	pg, lea, mia := teamApps(t)
	exports := t.TempDir()
	lea.Inventory.setSaveDialog(func(_, name string) (string, error) { return filepath.Join(exports, name), nil })

	waitTeam(t, "both syncers", func() bool { return lea.keeper.Team() != nil && mia.keeper.Team() != nil })
	// Each window was told: the membership came while the app ran.
	waitTeam(t, "team:changed in both windows", func() bool {
		return lea.countEvents(EventTeamChanged) > 0 && mia.countEvents(EventTeamChanged) > 0
	})
	st, err := lea.Team.Status()
	lea.show(st)
	if err != nil || !st.InTeam || st.Role != team.KindLead || st.TeamName != "platform" || st.Machine != "lea-laptop" || !st.Sharing {
		t.Fatalf("lead's status: %+v, %v", st, err)
	}
	ms, err := mia.Team.Status()
	if err != nil || ms.Role != team.KindMember || ms.Member != "mia" {
		t.Fatalf("member's status: %+v, %v", ms, err)
	}
	if _, err := mia.Team.Machines(); err == nil || err.Error() != string(errNotLead) {
		t.Fatalf("a member reading the machines: %v", err)
	}
	if _, err := mia.Team.Rows(TeamFilter{}, ""); err == nil || err.Error() != string(errNotLead) {
		t.Fatalf("a member reading the rows: %v", err)
	}

	var page TeamRowsPage
	waitTeam(t, "mia's rows at the lead", func() bool {
		page, err = lea.Team.Rows(TeamFilter{}, "")
		return err == nil && len(page.Rows) == 2
	})
	lea.show(page)
	if r := page.Rows[0]; r.Hostname != "mia-desktop" || r.Member != "mia" || !r.Verified || r.Row.Name != "deploy hook" ||
		!r.Row.Controlled || r.Row.BackupRevoker != "bob" || page.Next != "" {
		t.Fatalf("first row: %+v, next %q", r, page.Next)
	}
	for _, c := range []struct {
		f    TeamFilter
		want string
	}{
		{TeamFilter{State: "not_under_control"}, "status page"},
		{TeamFilter{Text: "bob"}, "deploy hook"},
		{TeamFilter{Text: "STATUS", Machine: "mia-desktop"}, "status page"},
	} {
		p, err := lea.Team.Rows(c.f, "")
		lea.show(p)
		if err != nil || len(p.Rows) != 1 || p.Rows[0].Row.Name != c.want {
			t.Errorf("filter %+v: %+v, %v; want only %q", c.f, p.Rows, err, c.want)
		}
	}
	if p, err := lea.Team.Rows(TeamFilter{Machine: "lea-laptop"}, ""); err != nil || len(p.Rows) != 0 {
		t.Errorf("the lead's own machine holds no row: %+v, %v", p, err)
	}
	if _, err := lea.Team.Rows(TeamFilter{State: "nonsense"}, ""); err == nil || !strings.Contains(err.Error(), "No such filter") {
		t.Errorf("an unknown filter: %v", err)
	}
	if _, err := lea.Team.Rows(TeamFilter{}, "not a cursor!"); err == nil || !strings.Contains(err.Error(), "Not a page cursor") {
		t.Errorf("a broken cursor: %v", err)
	}

	machines, err := lea.Team.Machines()
	lea.show(machines)
	if err != nil || len(machines) != 2 {
		t.Fatalf("machines: %+v, %v", machines, err)
	}
	byHost := map[string]TeamMachineView{}
	for _, m := range machines {
		byHost[m.Hostname] = m
	}
	if m := byHost["mia-desktop"]; m.Member != "mia" || m.Kind != team.KindMember || m.Rows != 2 || m.LastSeen == "" || m.Removed != "" {
		t.Errorf("mia's machine: %+v", m)
	}

	deploy := page.Rows[0]
	if _, err := lea.Team.RequestRevocation("mia-desktop", "no-such-row", "gone"); err == nil || !strings.Contains(err.Error(), "No such machine") {
		t.Errorf("a request for no row: %v", err)
	}
	req, err := lea.Team.RequestRevocation("mia-desktop", deploy.Row.ID, "mia left the project")
	lea.show(req)
	if err != nil || req.Status != team.StatusPending || req.RowName != "deploy hook" ||
		!strings.HasPrefix(req.Waiting, "pending at mia-desktop since ") || !strings.HasSuffix(req.Waiting, "; backup revoker: bob") {
		t.Fatalf("the request: %+v, %v", req, err)
	}
	// mia's Yett answers at once: it revokes OAuth authorizations only, and
	// says so.
	var answered TeamRequestView
	waitTeam(t, "mia's answer", func() bool {
		reqs, err := lea.Team.Requests()
		if err != nil || len(reqs) != 1 {
			return false
		}
		answered = reqs[0]
		return answered.Status != team.StatusPending
	})
	lea.show(answered)
	if answered.ID != req.ID || answered.Status != team.StatusRefused || !answered.Verified || answered.Waiting != "" ||
		!strings.Contains(answered.Outcome, "deploy hook") || answered.AnsweredAt == "" {
		t.Errorf("the answered request: %+v", answered)
	}

	cps, err := lea.Team.Checkpoints()
	lea.show(cps)
	if err != nil {
		t.Fatalf("checkpoints: %v", err)
	}
	for _, c := range cps {
		if c.Refused || c.Words == "" {
			t.Errorf("checkpoint %+v", c)
		}
	}

	for _, format := range []string{"csv", "json"} {
		res, err := lea.Team.Export(format, TeamFilter{State: "not_under_control"})
		lea.show(res)
		if err != nil || !res.Saved {
			t.Fatalf("export %s: %+v, %v", format, res, err)
		}
		b, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "mia-desktop") || !strings.Contains(string(b), "status page") || strings.Contains(string(b), "deploy hook") {
			t.Errorf("export %s holds the wrong rows:\n%s", format, b)
		}
		if strings.Contains(string(b), teamSecretCanary) || strings.Contains(string(b), teamAdminCanary) {
			t.Errorf("export %s holds a canary", format)
		}
	}
	if _, err := lea.Team.Export("xml", TeamFilter{}); err == nil {
		t.Error("an export as xml")
	}

	pg.Stop()
	if _, err := lea.Team.Machines(); err == nil ||
		!strings.HasPrefix(err.Error(), "The team database cannot be reached") || !strings.Contains(err.Error(), "showing nothing") {
		t.Errorf("with the database stopped: %v", err)
	}
	for _, o := range []*oauthApp{lea, mia} {
		o.noSecret(t, teamSecretCanary)
		o.noSecret(t, teamAdminCanary)
	}
	if b, _ := json.Marshal(lea.shown); !strings.Contains(string(b), "mia-desktop") {
		t.Error("the views checked hold nothing of the team")
	}
}

// TestTeamServiceWithoutATeam: a machine in no team says so, and a lead's
// call is refused in words.
func TestTeamServiceWithoutATeam(t *testing.T) {
	o := newOAuthApp(t)
	if st, err := o.Team.Status(); err != nil || st.InTeam {
		t.Fatalf("before the vault exists: %+v, %v", st, err)
	}
	o.create(t)
	if st, err := o.Team.Status(); err != nil || st.InTeam || st.Role != "" {
		t.Fatalf("in no team: %+v, %v", st, err)
	}
	if _, err := o.Team.Machines(); err == nil || err.Error() != string(errNoTeamHere) {
		t.Fatalf("machines in no team: %v", err)
	}
	if err := o.vault.Lock("test"); err != nil {
		t.Fatal(err)
	}
	if st, err := o.Team.Status(); err != nil || st.InTeam {
		t.Fatalf("locked: %+v, %v", st, err)
	}
	if _, err := o.Team.Rows(TeamFilter{}, ""); err == nil || !strings.Contains(err.Error(), "Unlock the vault") {
		t.Fatalf("rows while locked: %v", err)
	}
}

// TestTeamCheckpointWords: each state of a machine's checkpoint is said
// in words: witnessed, not yet, never, a refusal (either reason, with its
// signature or not), a checkpoint without its machine's signature.
func TestTeamCheckpointWords(t *testing.T) {
	at := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	base := team.CheckpointView{Hostname: "mia-desktop", Size: 40, Verified: true, CosignedSize: 40, Witness: "w1"}
	with := func(edit func(*team.CheckpointView)) team.CheckpointView { c := base; edit(&c); return c }
	for _, c := range []struct {
		cp                 team.CheckpointView
		witnessed, refused bool
		words              string
	}{
		{base, true, false, "Its newest checkpoint, 40 records, is witnessed by w1."},
		{with(func(c *team.CheckpointView) { c.CosignedSize, c.Witness = 0, "" }), false, false, "No witness has cosigned mia-desktop's log"},
		{with(func(c *team.CheckpointView) { c.CosignedSize = 30 }), false, false, "Not yet witnessed at 40 records: the witness cosigned up to 30."},
		{with(func(c *team.CheckpointView) {
			c.Refused, c.RefusedBy, c.RefusedSize, c.RefusedWitnessSize, c.RefusedAt, c.RefusalVerified = "rollback", "w1", 12, 40, at, true
		}), true, true, "Refused by w1: mia-desktop's log was cut back (a checkpoint at 12 records, where the witness had cosigned 40)."},
		{with(func(c *team.CheckpointView) {
			c.Refused, c.RefusedBy, c.RefusedSize, c.RefusedWitnessSize, c.RefusedAt = "fork", "w1", 50, 40, at
		}), true, true, "log was rewritten (its checkpoint at 50 records does not extend the 40 the witness had cosigned). The refusal does not carry"},
		{with(func(c *team.CheckpointView) { c.Verified = false }), true, false, "does not carry mia-desktop's signature"},
	} {
		v := teamCheckpointView(c.cp)
		if v.Witnessed != c.witnessed || v.Refused != c.refused || !strings.Contains(v.Words, c.words) {
			t.Errorf("%+v: witnessed %v, refused %v, %q; want %v, %v, %q", c.cp, v.Witnessed, v.Refused, v.Words, c.witnessed, c.refused, c.words)
		}
		if v.Refused && (v.Refusal != c.cp.Refused || v.RefusedAt != "2026-12-07T06:00:00Z") {
			t.Errorf("the refusal: %+v", v)
		}
	}
}
