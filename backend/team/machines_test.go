//go:build unix

package team_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// The team's tests run each machine where it runs in the product: a data
// directory of its own with a vault and a keeper (the composition root the
// app and yett serve use), which starts the team syncer when the vault
// unlocks and holds a membership. Several machines live in one test.

const (
	passphrase    = "correct horse battery staple"
	adminPassword = "CANARY-team-admin-pw-5f0e"
	clientCanary  = "CANARY-team-client-secret-a91b"
	httpCanary    = "CANARY-team-http-secret-77c4"
)

// machine is one Yett installation.
type machine struct {
	t        *testing.T
	host     string
	dir, run string
	v        *vault.Vault
	k        *keeper.Keeper
}

func newMachine(t *testing.T, host string) *machine {
	t.Helper()
	base, err := os.MkdirTemp("", "yt") // short: the gateway's socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	m := &machine{t: t, host: host, dir: filepath.Join(base, "data"), run: filepath.Join(base, "run")}
	m.v, err = vault.Open(m.dir, vault.Options{KDF: vault.KDFParams{Time: 1, MemKiB: 64, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	m.k, err = keeper.Open(keeper.Config{DataDir: m.dir, RuntimeDir: m.run, Vault: m.v, ApprovalTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.v.Create(vault.Passphrase(passphrase), false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.close)
	return m
}

func (m *machine) close() {
	if m.k != nil {
		m.k.Close()
		m.k = nil
	}
	if m.v != nil {
		m.v.Close()
		m.v = nil
	}
}

func (m *machine) lock() {
	m.t.Helper()
	if err := m.v.Lock("test"); err != nil {
		m.t.Fatal(err)
	}
}

func (m *machine) unlock() {
	m.t.Helper()
	if err := m.v.Unlock(vault.Passphrase(passphrase)); err != nil {
		m.t.Fatal(err)
	}
}

func (m *machine) custody() *oauth.Custody { return m.k.State().OAuth }

// creds reads the machine's membership from its vault.
func (m *machine) creds() *team.Credentials {
	m.t.Helper()
	c, err := team.Load(m.v.Team())
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(c.Wipe)
	return c
}

func (m *machine) status() team.Status {
	if s := m.k.Team(); s != nil {
		return s.Status()
	}
	return team.Status{}
}

// addCredential adds an HTTP credential whose secret is a canary.
func (m *machine) addCredential(name string) string {
	m.t.Helper()
	cv, err := m.v.Credentials().Add(vault.NewCredential{Name: name, Secret: vault.NewSecret([]byte(httpCanary + "-" + m.host)),
		Injection: vault.Injection{Format: vault.InjectBearer}, Hosts: []string{m.host + ".example.com"}, Approval: vault.ApprovalSession})
	if err != nil {
		m.t.Fatal(err)
	}
	return cv.ID
}

// connect connects a client-credentials authorization at p, with the
// token endpoint reached through tokens, which records every token the
// provider hands out.
func (m *machine) connect(p *oauthtest.Provider, tokens *tokenRecorder, name, owner, backup string) string {
	m.t.Helper()
	f, err := m.custody().Connect(context.Background(), oauth.ConnectRequest{
		Name: name, Provider: "custom", ClientID: oauthtest.DefaultClientID, ClientAuth: oauth.ClientAuthSecret,
		Endpoints:    oauth.Endpoints{TokenEndpoint: tokens.URL + "/token", RevocationEndpoint: p.URL + "/revoke", IntrospectionEndpoint: p.URL + "/introspect"},
		ClientSecret: []byte(clientCanary), Scopes: []string{"read"}, Environment: "production", Flow: oauth.FlowClientCredentials,
		Owner: owner, BackupRevoker: backup,
	})
	if err != nil {
		m.t.Fatal(err)
	}
	return f.AuthorizationID
}

// tokenRecorder is a proxy in front of a provider's token endpoint that
// keeps every token value it answers with: the canaries the database must
// never hold.
type tokenRecorder struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newTokenRecorder(t *testing.T, p *oauthtest.Provider) *tokenRecorder {
	t.Helper()
	target, _ := url.Parse(p.URL)
	r := &tokenRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		var tok struct {
			Access  string `json:"access_token"`
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(body, &tok) == nil {
			r.mu.Lock()
			for _, v := range []string{tok.Access, tok.Refresh} {
				if v != "" {
					r.tokens = append(r.tokens, v)
				}
			}
			r.mu.Unlock()
		}
		res.Body = io.NopCloser(strings.NewReader(string(body)))
		return nil
	}
	r.Server = httptest.NewServer(proxy)
	t.Cleanup(r.Close)
	return r
}

func (r *tokenRecorder) issued() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}

// teamDatabase is an empty database and its administrative role on pg.
func teamDatabase(t *testing.T, pg *pgtest.Server) (team.Database, string) {
	t.Helper()
	ctx := context.Background()
	su, err := pgx.Connect(ctx, pg.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	var suffix string
	if err := su.QueryRow(ctx, `SELECT substr(md5(random()::text), 1, 8)`).Scan(&suffix); err != nil {
		t.Fatal(err)
	}
	admin, name := "yett_admin_"+suffix, "team_"+suffix
	for _, stmt := range []string{
		`CREATE ROLE ` + admin + ` LOGIN CREATEROLE PASSWORD '` + adminPassword + `'`,
		`CREATE DATABASE ` + name + ` OWNER ` + admin,
	} {
		if _, err := su.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return team.Database{Host: pg.Host, Port: pg.Port, Name: name, SSLMode: "disable"}, admin
}

// createTeam makes m the founding lead of a new team in db.
func createTeam(t *testing.T, m *machine, db team.Database, admin string) {
	t.Helper()
	pw := vault.NewSecret([]byte(adminPassword))
	c, err := team.Create(context.Background(), team.CreateRequest{Database: db, AdminRole: admin, AdminPassword: &pw,
		Name: "platform", Member: "lea", Hostname: m.host, Version: "test"}, team.Keep(m.v.Team()))
	if err != nil {
		t.Fatal(err)
	}
	c.Wipe()
	waitFor(t, m.host+"'s syncer", func() bool { return m.k.Team() != nil })
}

// invite has the founding lead's vault invite member, and m join with the
// code, as yett team invite and yett team join do.
func invite(t *testing.T, lead *machine, m *machine, member string) {
	t.Helper()
	ctx := context.Background()
	admin, err := team.OpenAdmin(ctx, lead.creds())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	inv, err := admin.Invite(ctx, member, team.KindMember, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code := inv.Code()
	parsed, err := team.ParseCode(code.Bytes())
	code.Wipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := team.Join(ctx, &parsed, m.host, "test", team.Keep(m.v.Team()))
	if err != nil {
		t.Fatal(err)
	}
	c.Wipe()
	waitFor(t, m.host+"'s syncer", func() bool { return m.k.Team() != nil })
}

// waitFor polls cond for up to 60 s: a generous bound, never a figure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pair is a team of a founding lead (lea) and one member (mia) holding
// one OAuth authorization (az) at a test provider, and the lead's
// session.
type pair struct {
	pg       *pgtest.Server
	db       team.Database
	p        *oauthtest.Provider
	tokens   *tokenRecorder
	lea, mia *machine
	az       string
	lead     *team.Lead
}

func newPair(t *testing.T, pg *pgtest.Server) *pair {
	t.Helper()
	db, admin := teamDatabase(t, pg)
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: clientCanary})
	w := &pair{pg: pg, db: db, p: p, tokens: newTokenRecorder(t, p), lea: newMachine(t, "lea-laptop"), mia: newMachine(t, "mia-desktop")}
	createTeam(t, w.lea, db, admin)
	invite(t, w.lea, w.mia, "mia")
	w.az = w.mia.connect(p, w.tokens, "tracker", "mia", "bob")
	var err error
	if w.lead, err = team.OpenLead(context.Background(), w.lea.creds()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.lead.Close() })
	waitFor(t, "mia's row at the lead", func() bool {
		rows, _, _ := w.lead.Rows(context.Background(), team.RowFilter{})
		return len(rows) == 1
	})
	return w
}

// withoutSyncer keeps m's Yett running without the syncer its keeper
// would start (a keeper that serves no agents runs none): the test starts
// one of its own (startSyncer), on a clock of its choosing, or none, as a
// laptop that is offline.
func (m *machine) withoutSyncer() {
	m.t.Helper()
	m.lock()
	m.k.Close()
	k, err := keeper.Open(keeper.Config{DataDir: m.dir, RuntimeDir: m.run, Vault: m.v, NoGateway: true})
	if err != nil {
		m.t.Fatal(err)
	}
	m.k = k
	m.unlock()
}

// startSyncer starts a syncer for m as its keeper would, on clock now
// (nil: the system's).
func (m *machine) startSyncer(now func() time.Time) *team.Syncer {
	m.t.Helper()
	creds, err := team.Load(m.v.Team())
	if err != nil {
		m.t.Fatal(err)
	}
	st := m.k.State()
	s, err := team.Start(team.Config{DataDir: m.dir, Inventory: st.Inventory, Revoker: st.OAuth, Now: now,
		Ready: func() bool { return m.v.Status().State == vault.StateUnlocked }}, creds)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { s.Close() })
	return s
}
