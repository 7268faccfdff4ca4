package inventory_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/internal/testsupport/hydratest"
)

// provider is a counting proxy in front of one of Hydra's ports: it
// records every request (its path and time), keeps the last tokens the
// token endpoint issued (in memory, never printed) so the test can ask
// Hydra about them, and can take the revocation endpoint down.
type provider struct {
	URL      string
	mu       sync.Mutex
	hits     []hit
	access   string
	refresh  string
	revokeUp atomic.Bool
	// introspectUp false takes the introspection endpoint down.
	introspectUp atomic.Bool
}

type hit struct {
	path string
	at   time.Time
}

func newProvider(t *testing.T, target string) *provider {
	t.Helper()
	u, _ := url.Parse(target)
	p := &provider{}
	p.revokeUp.Store(true)
	p.introspectUp.Store(true)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.URL.Path != "/oauth2/token" || resp.StatusCode != http.StatusOK {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
			var tok struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
			}
			if json.Unmarshal(b, &tok) == nil {
				p.mu.Lock()
				p.access = tok.AccessToken
				if tok.RefreshToken != "" {
					p.refresh = tok.RefreshToken
				}
				p.mu.Unlock()
			}
			return nil
		}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits = append(p.hits, hit{r.URL.Path, time.Now()})
		p.mu.Unlock()
		if r.URL.Path == "/oauth2/revoke" && !p.revokeUp.Load() || r.URL.Path == "/admin/oauth2/introspect" && !p.introspectUp.Load() {
			// Down: the connection drops without an answer.
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// since counts the requests that arrived at or after t.
func (p *provider) since(t time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, h := range p.hits {
		if !h.at.Before(t) {
			out = append(out, h.path)
		}
	}
	return out
}

func (p *provider) tokens() (access, refresh string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.access, p.refresh
}

// api is the API behind the operation, counting what reaches it.
type api struct {
	*httptest.Server
	n atomic.Int32
}

func newAPI(t *testing.T) *api {
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":42}`))
	}))
	t.Cleanup(a.Close)
	return a
}

// hydraWorld is a desk with an authorization connected at Hydra through
// the counting proxies and one named operation on it.
type hydraWorld struct {
	*desk
	h            *hydratest.Hydra
	pub, admin   *provider
	api          *api
	id           string
	createIssue  map[string]any
	revokeViaPub bool
}

const opName = "tracker.create_issue"

func newHydraWorld(t *testing.T) *hydraWorld {
	return newHydraWorldWith(t, nil)
}

// newHydraWorldWith is newHydraWorld with the connection request changed
// by mod first (nil: none).
func newHydraWorldWith(t *testing.T, mod func(*oauth.ConnectRequest)) *hydraWorld {
	t.Helper()
	h := hydratest.Start(t, hydratest.Options{})
	w := &hydraWorld{desk: newDesk(t, deskOpts{}), h: h, api: newAPI(t)}
	w.pub, w.admin = newProvider(t, h.PublicURL), newProvider(t, h.AdminURL)
	w.createIssue = map[string]any{"project": "A", "body": map[string]any{"title": "release notes"}}
	w.connect(mod)
	return w
}

// connect connects an unattended authorization through the real loopback
// callback, as the app does, and saves the operation on it.
func (w *hydraWorld) connect(mod func(*oauth.ConnectRequest)) {
	t := w.t
	client := w.h.CreateClient(t, hydratest.ClientSpec{AuthMethod: "none", RedirectURIs: []string{"http://127.0.0.1/callback"}})
	req := oauth.ConnectRequest{
		Name: "tracker", Provider: "custom", Flow: oauth.FlowAuthorizationCode, Environment: "development",
		Endpoints: oauth.Endpoints{Issuer: w.h.Issuer, AuthorizationEndpoint: w.h.PublicURL + "/oauth2/auth", TokenEndpoint: w.pub.URL + "/oauth2/token",
			RevocationEndpoint: w.pub.URL + "/oauth2/revoke", IntrospectionEndpoint: w.admin.URL + "/admin/oauth2/introspect"},
		ClientID: client, ClientAuth: oauth.ClientAuthNone, Scopes: []string{"openid", "offline_access"}, Unattended: true,
		Owner: "alice", BackupRevoker: "bob",
	}
	if mod != nil {
		mod(&req)
	}
	fv, err := w.oauth().Connect(w.ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	w.browse(fv)
	w.id = fv.AuthorizationID
	if w.id == "" {
		done, _ := w.oauth().Flow(fv.ID)
		w.id = done.AuthorizationID
	}
	err = w.ops().Save(operation.Operation{
		Name: opName, AuthorizationID: w.id, Description: "Create an issue in project A",
		Method: "POST", URLTemplate: w.api.URL + "/projects/{project}/issues",
		Params:     []operation.Param{{Name: "project", Type: "string", Allowed: []string{"A"}, Required: true}},
		BodySchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","maxLength":200}},"required":["title"]}`),
		Approval:   operation.ApprovalSession,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// browse completes a flow in the test's browser and waits for it.
func (w *hydraWorld) browse(fv oauth.FlowView) {
	t := w.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if status, _, err := w.h.Browse(ctx, fv.AuthorizationURL); err != nil || status != 200 {
		t.Fatalf("browse: %d %v", status, err)
	}
	done, err := w.oauth().WaitFlow(ctx, fv.ID)
	if err != nil || done.State != oauth.FlowConnected {
		t.Fatalf("flow: %+v %v", done, err)
	}
}

// use has an approved agent call the operation once.
func (w *hydraWorld) use() *agent {
	w.t.Helper()
	a := w.agent()
	w.createIssue["idempotency_key"] = "use-" + time.Now().Format("150405.000000")
	a.send(opName, w.createIssue)
	w.approveNext()
	if r := a.reply(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		w.t.Fatalf("a normal call: %+v", r)
	}
	return a
}

func (w *hydraWorld) step(rep inventory.Report, name string) inventory.Step {
	w.t.Helper()
	for _, s := range rep.Steps {
		if s.Name == name {
			return s
		}
	}
	w.t.Fatalf("the report has no step %s: %+v", name, rep.Steps)
	return inventory.Step{}
}

func stepNames(rep inventory.Report) []string {
	var out []string
	for _, s := range rep.Steps {
		out = append(out, s.Name)
	}
	return out
}

func logSteps(t *testing.T, rep inventory.Report) {
	t.Helper()
	for _, s := range rep.Steps {
		t.Logf("%s drill, %-20s %5d ms passed=%v: %s", rep.Kind, s.Name, s.DurationMS, s.Passed, strings.Join(s.Evidence, " | "))
	}
	t.Logf("%s drill, total %d ms", rep.Kind, rep.FinishedAt.Sub(rep.StartedAt).Milliseconds())
}

// TestFullDrillAgainstHydra: seed 002's drill, every step passing against
// a real provider. Afterwards Hydra's introspection says both tokens are
// inactive, a call is refused locally with nothing reaching the provider or
// the API, the report is stored and in the audit log, and the owner can
// reconnect.
func TestFullDrillAgainstHydra(t *testing.T) {
	w := newHydraWorld(t)
	a := w.use()
	access, refresh := w.pub.tokens()
	if access == "" || refresh == "" || !w.h.Introspect(t, refresh).Active {
		t.Fatal("the proxy did not see the tokens Hydra issued")
	}
	apiBefore := w.api.n.Load()

	rep, err := w.inv().RunDrill(w.ctx(), w.id, inventory.DrillFull, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, rep)
	want := []string{inventory.StepLocalDisable, inventory.StepProviderRevocation, inventory.StepCallRefused, inventory.StepStaysRefused, inventory.StepAuditNamesUsers}
	if !rep.Passed || !slices.Equal(stepNames(rep), want) || rep.EndState != "revoked" || rep.Running {
		t.Fatalf("full drill: passed=%v steps=%v end=%s advice=%s", rep.Passed, stepNames(rep), rep.EndState, rep.Advice)
	}
	for _, s := range rep.Steps {
		if !s.Passed || len(s.Evidence) == 0 || s.Did == "" || s.AuditIndex == 0 {
			t.Errorf("step %s: %+v", s.Name, s)
		}
	}
	if w.h.Introspect(t, refresh).Active || w.h.Introspect(t, access).Active {
		t.Fatal("Hydra still reports a token active after the full drill")
	}
	rev := strings.Join(w.step(rep, inventory.StepProviderRevocation).Evidence, "\n")
	if strings.Count(rev, "HTTP 200") != 2 || strings.Count(rev, "inactive") != 2 {
		t.Errorf("provider step's evidence: %s", rev)
	}
	// From the drill client's call on, nothing reached the provider; and
	// nothing reached the API during the whole drill.
	call := w.step(rep, inventory.StepCallRefused)
	if got := append(w.pub.since(call.StartedAt), w.admin.since(call.StartedAt)...); len(got) != 0 {
		t.Errorf("requests reached the provider after the drill's call: %v", got)
	}
	if w.api.n.Load() != apiBefore {
		t.Error("a request reached the API during the drill")
	}
	if ev := strings.Join(call.Evidence, "\n"); !strings.Contains(ev, agentapi.CodeAuthRevoked) || !strings.Contains(ev, "action_denied, reason revoked") {
		t.Errorf("call step's evidence: %s", ev)
	}
	stays := strings.Join(w.step(rep, inventory.StepStaysRefused).Evidence, "\n")
	if !strings.Contains(stays, "tools an agent sees: ") || !strings.Contains(stays, "no credential is bound to") {
		t.Errorf("stays-refused evidence: %s", stays)
	}
	users := strings.Join(w.step(rep, inventory.StepAuditNamesUsers).Evidence, "\n")
	if !strings.Contains(users, "1 call from 1 session used it") || !strings.Contains(users, "sessions: ap-") || !strings.Contains(users, "pid ") {
		t.Errorf("audit step's evidence: %s", users)
	}

	// A call after the drill is refused locally: nothing reaches the
	// provider or the API.
	after := time.Now()
	w.createIssue["idempotency_key"] = "after-full-drill"
	if r := a.call(opName, w.createIssue); !r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeAuthRevoked) {
		t.Fatalf("a call after the drill: %+v", r)
	}
	if got := append(w.pub.since(after), w.admin.since(after)...); len(got) != 0 || w.api.n.Load() != apiBefore {
		t.Errorf("the refused call reached the provider (%v) or the API", got)
	}

	// The report is stored, exportable, on the row, and in the audit log.
	stored, err := w.inv().Drills(w.id, 0)
	if err != nil || len(stored) != 1 || stored[0].ID != rep.ID || !stored[0].Passed {
		t.Fatalf("stored reports: %+v %v", stored, err)
	}
	js, err := w.inv().ExportDrill(rep.ID)
	if err != nil || !json.Valid(js) || strings.Contains(string(js), access) || strings.Contains(string(js), refresh) {
		t.Fatalf("exported report: %v", err)
	}
	row := w.row(w.id)
	if row.LastDrill == nil || row.LastDrill.ID != rep.ID || !row.LastDrill.Passed || row.State != "revoked" || row.DrillOverdue {
		t.Fatalf("the row after the drill: %+v", row)
	}
	var kinds []string
	for _, e := range w.events() {
		if ev := e.Event; ev.Drill != nil && ev.Drill.DrillID == rep.ID {
			kinds = append(kinds, string(ev.Type))
			if ev.Type == audit.EventDrillStep && (ev.Success == nil || !*ev.Success) {
				t.Errorf("drill step entry #%d did not pass", e.Index)
			}
		}
	}
	if want := []string{"drill_started", "drill_step", "drill_step", "drill_step", "drill_step", "drill_step", "drill_finished"}; !slices.Equal(kinds, want) {
		t.Errorf("audit entries of the drill: %v", kinds)
	}

	// The owner reconnects it.
	fv, err := w.oauth().Reconnect(w.ctx(), w.id)
	if err != nil {
		t.Fatal(err)
	}
	w.browse(fv)
	if v, _ := w.oauth().Authorization(w.id); v.State != oauth.StateActive {
		t.Fatalf("after reconnecting: %s", v.State)
	}
	w.createIssue["idempotency_key"] = "after-reconnect"
	a.send(opName, w.createIssue)
	w.approveNext()
	if r := a.reply(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("a call after reconnecting: %+v", r)
	}
}

// TestUnattendedDrillAgainstHydra: the drill that runs with nobody
// present leaves the refresh token active at Hydra, switches the
// authorization back on, and a call succeeds afterwards; its report names
// the full drill's steps it did not exercise.
func TestUnattendedDrillAgainstHydra(t *testing.T) {
	w := newHydraWorld(t)
	a := w.use()
	_, refresh := w.pub.tokens()
	apiBefore := w.api.n.Load()

	rep, err := w.inv().RunDrill(w.ctx(), w.id, inventory.DrillUnattended, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, rep)
	want := []string{inventory.StepLocalDisable, inventory.StepCallRefused, inventory.StepRevocationEndpoint, inventory.StepRefreshTokenKept,
		inventory.StepAuditNamesUsers, inventory.StepReEnable, inventory.StepCallPasses}
	if !rep.Passed || !slices.Equal(stepNames(rep), want) || rep.EndState != "active" || len(rep.NotExercised) != 3 {
		t.Fatalf("unattended drill: passed=%v steps=%v end=%s advice=%s", rep.Passed, stepNames(rep), rep.EndState, rep.Advice)
	}
	if ev := strings.Join(w.step(rep, inventory.StepCallRefused).Evidence, "\n"); !strings.Contains(ev, agentapi.CodeAuthSuspended) {
		t.Errorf("the suspended call's evidence: %s", ev)
	}
	if ev := strings.Join(w.step(rep, inventory.StepRevocationEndpoint).Evidence, "\n"); !strings.Contains(ev, "HTTP 200") {
		t.Errorf("the revocation endpoint's evidence: %s", ev)
	}
	if ev := strings.Join(w.step(rep, inventory.StepRefreshTokenKept).Evidence, "\n"); !strings.Contains(ev, "refresh token is active") {
		t.Errorf("the refresh token's evidence: %s", ev)
	}
	if ev := strings.Join(w.step(rep, inventory.StepCallPasses).Evidence, "\n"); !strings.Contains(ev, agentapi.CodeDrillStopped) {
		t.Errorf("the last call's evidence: %s", ev)
	}
	if w.api.n.Load() != apiBefore {
		t.Error("a request reached the API during the drill")
	}
	if !w.h.Introspect(t, refresh).Active {
		t.Fatal("Hydra no longer honours the refresh token after an unattended drill")
	}
	w.createIssue["idempotency_key"] = "after-unattended"
	a.send(opName, w.createIssue)
	w.approveNext() // the drill ended the sessions that could use it
	if r := a.reply(); r.IsError || !strings.Contains(r.Text, `"status":200`) {
		t.Fatalf("a call after the drill: %+v", r)
	}
	if row := w.row(w.id); row.State != "active" || row.LastDrill == nil || !row.LastDrill.Passed || !row.NextDrill.After(time.Now()) {
		t.Fatalf("the row after the drill: %+v", row)
	}
}

// TestScheduledDrillDueInThePastRunsAtStart: a drill that came due while
// Yett was not running runs (unattended) as soon as Yett starts again and
// the vault is unlocked.
func TestScheduledDrillDueInThePastRunsAtStart(t *testing.T) {
	w := newHydraWorld(t)
	if r := w.row(w.id); r.DrillOverdue || r.Drilling {
		t.Fatalf("a new row is due already: %+v", r)
	}
	dir, run := w.dir, w.run
	w.close()
	// Yett was not running for 100 days: the connection is that old.
	db, err := sql.Open("sqlite", filepath.Join(dir, oauth.FileName))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-100 * 24 * time.Hour).Unix()
	if _, err := db.Exec(`UPDATE oauth_authorizations SET connected_at = ? WHERE id = ?`, old, w.id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	w.desk = newDesk(t, deskOpts{dir: dir, run: run})
	var reps []inventory.Report
	waitFor(t, "the scheduled drill", func() bool {
		reps, _ = w.inv().Drills(w.id, 0)
		return len(reps) == 1
	})
	rep := reps[0]
	logSteps(t, rep)
	if rep.Kind != inventory.DrillUnattended || rep.Trigger != inventory.TriggerSchedule || !rep.Passed {
		t.Fatalf("the drill that ran at start: %+v", rep)
	}
	if r := w.row(w.id); r.DrillOverdue || r.State != "active" || !r.NextDrill.After(time.Now().Add(80*24*time.Hour)) {
		t.Fatalf("the row after the scheduled drill: %+v", r)
	}
}

// TestDrillStopsAtStep2WhenRevocationIsDown: the provider's revocation
// endpoint does not answer: the full drill fails at step 2, stops there,
// leaves the authorization disabled locally (a call is refused) and says
// what to do.
func TestDrillStopsAtStep2WhenRevocationIsDown(t *testing.T) {
	w := newHydraWorld(t)
	a := w.use()
	w.pub.revokeUp.Store(false)
	rep, err := w.inv().RunDrill(w.ctx(), w.id, inventory.DrillFull, inventory.TriggerPerson)
	if err != nil {
		t.Fatal(err)
	}
	logSteps(t, rep)
	if rep.Passed || !slices.Equal(stepNames(rep), []string{inventory.StepLocalDisable, inventory.StepProviderRevocation}) {
		t.Fatalf("drill with the revocation endpoint down: passed=%v steps=%v", rep.Passed, stepNames(rep))
	}
	if s := w.step(rep, inventory.StepProviderRevocation); s.Passed || !strings.Contains(strings.Join(s.Evidence, " "), "unreachable") {
		t.Errorf("step 2: %+v", s)
	}
	if rep.EndState != "disabled" || !strings.Contains(rep.Advice, "stays switched off") || !strings.Contains(rep.Advice, "keeps trying") {
		t.Errorf("end state %s, advice %q", rep.EndState, rep.Advice)
	}
	if _, err := w.oauth().Check(w.id); !errors.Is(err, oauth.ErrDisabled) {
		t.Fatalf("custody after the failed drill: %v", err)
	}
	w.createIssue["idempotency_key"] = "after-failed-drill"
	if r := a.call(opName, w.createIssue); !r.IsError || !strings.HasPrefix(r.Text, agentapi.CodeAuthRevoked) {
		t.Fatalf("a call after the failed drill: %+v", r)
	}
	if row := w.row(w.id); row.LastDrill == nil || row.LastDrill.Passed {
		t.Fatalf("the row after the failed drill: %+v", row)
	}
}
