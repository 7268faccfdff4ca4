package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/vault"
)

// The full drill: seed 002's five steps.
var fullSteps = []stepDef{
	{StepLocalDisable, "Disable it locally", disableLocally},
	{StepProviderRevocation, "Revoke its refresh and access tokens at the provider (RFC 7009)", revokeAtProvider},
	{StepCallRefused, "An agent-style call through the gateway is refused locally", callRefused(agentapi.CodeAuthRevoked)},
	{StepStaysRefused, "It stays refused until a person reconnects it", staysRefused},
	{StepAuditNamesUsers, "The audit log names the sessions and processes that used it", auditNamesUsers},
}

// The unattended drill: safe with nobody present.
var unattendedSteps = []stepDef{
	{StepLocalDisable, "Switch it off locally (its tokens are kept)", suspendLocally},
	{StepCallRefused, "An agent-style call through the gateway is refused locally", callRefused(agentapi.CodeAuthSuspended)},
	{StepRevocationEndpoint, "The provider's revocation endpoint is known and accepts a revocation", probeRevocation},
	{StepRefreshTokenKept, "The refresh token is left alone", refreshTokenKept},
	{StepAuditNamesUsers, "The audit log names the sessions and processes that used it", auditNamesUsers},
	{StepReEnable, "Switch it back on", reEnable},
	{StepCallPasses, "The same call passes every local check again", callPasses},
}

const adviceDisabled = "The authorization stays switched off in Yett, so nothing can use it here."

func disableLocally(ctx context.Context, d *drill) (bool, string, []string, string) {
	c, id := d.inv.cfg.Custody, d.rep.AuthorizationID
	did := "Yett took its refresh and access tokens out of service, dropped the access tokens it held in memory and ended every agent session that could use it, without any network call."
	if err := c.Disable(ctx, id); err != nil {
		return false, did, []string{"custody refused: " + err.Error()}, "Yett could not disable it. Revoke it from Connections, or in the provider's settings."
	}
	_, err := c.Check(id)
	if !errors.Is(err, oauth.ErrDisabled) {
		return false, did, []string{fmt.Sprintf("custody still answers %v for it", err)}, "Revoke it from Connections now."
	}
	return true, did, []string{"custody answers for it: the authorization is disabled", "its tokens wait in the revocation queue, sealed for revocation only"}, ""
}

func revokeAtProvider(ctx context.Context, d *drill) (bool, string, []string, string) {
	rep, err := d.inv.cfg.Custody.RevokeAtProvider(ctx, d.rep.AuthorizationID)
	did := "Yett sent the refresh token and the access token to the provider's revocation endpoint (RFC 7009) and asked its introspection (RFC 7662) whether each is inactive."
	if err != nil {
		return false, did, []string{"custody refused: " + err.Error()}, adviceDisabled + " Revoke the app's access in the provider's settings."
	}
	var ev []string
	ok := len(rep.Steps) > 0 && !rep.RetryPending
	for _, s := range rep.Steps {
		line := s.Detail
		if s.Step == oauth.StepProviderRevocation && s.TokenType != "" {
			line = fmt.Sprintf("%s: revocation answered %s", hintWords(s.TokenType), statusWords(s.Status))
		}
		if s.Step == oauth.StepVerification {
			line = hintWords(s.TokenType) + ": " + s.Detail
			if s.Unverified {
				d.notChecked = append(d.notChecked, "that the provider's revocation of the "+hintWords(s.TokenType)+" took effect (it offers no introspection endpoint Yett knows of: add it in Connections)")
			}
		}
		ev = append(ev, line)
		ok = ok && s.OK
	}
	if ok {
		return true, did, ev, ""
	}
	advice := adviceDisabled + " The provider did not confirm the revocation: revoke the app's access in the provider's settings."
	if rep.RetryPending {
		ev = append(ev, "Yett keeps sending the revocation, durably, until the provider accepts it")
		advice = adviceDisabled + " The provider's revocation endpoint could not be reached; Yett keeps trying. Check the provider, or revoke the app's access in its settings."
	}
	return false, did, ev, advice
}

func hintWords(h string) string { return strings.ReplaceAll(h, "_", " ") }

func statusWords(status int) string {
	if status == 0 {
		return "nothing (unreachable)"
	}
	return fmt.Sprintf("HTTP %d", status)
}

// callRefused: the drill client calls one of the authorization's named
// operations through the gateway; the answer must be want, from local
// state, with nothing sent.
func callRefused(want string) stepFunc {
	return func(ctx context.Context, d *drill) (bool, string, []string, string) {
		return d.callThrough(ctx, want, "refused")
	}
}

func callPasses(ctx context.Context, d *drill) (bool, string, []string, string) {
	return d.callThrough(ctx, agentapi.CodeDrillStopped, "passes")
}

// callThrough makes the drill client's call of the authorization's first
// named operation and checks its answer is want; the audit log's entry of
// the answer is the evidence.
func (d *drill) callThrough(ctx context.Context, want, what string) (bool, string, []string, string) {
	op := ""
	for _, o := range d.fact.Operations {
		if slices.Contains(d.inv.catalogueNames(), o) {
			op = o
			break
		}
	}
	if op == "" && len(d.fact.MCPServers) > 0 {
		return d.callServer(ctx, d.fact.MCPServers[0], want, what)
	}
	if op == "" {
		return true, "No named operation or MCP server uses it, so an agent has no tool that could.", []string{"the catalogue names no operation for it, and no MCP server gets its tokens from it"}, ""
	}
	did := fmt.Sprintf("Yett's drill client (pid %d) called %s through the gateway, over an MCP session served as an agent's is.", d.self, op)
	if what == "passes" {
		did += " A drill's call stops where an agent's would ask for approval."
	}
	fail := func(ev ...string) (bool, string, []string, string) {
		if what == "passes" {
			return false, did, ev, "A call does not pass Yett's local checks as it should: its owner looks at the evidence."
		}
		if d.rep.Kind == DrillUnattended {
			return false, did, ev, "An agent's call was not refused as expected while it was switched off: report this."
		}
		return false, did, ev, adviceDisabled + " But an agent's call was not refused as expected: report this."
	}
	args, ok := d.inv.operationArgs(op)
	if !ok {
		return fail("Yett could not make arguments its operation accepts")
	}
	if d.client == nil {
		c, err := dialDrill(ctx, d.inv.cfg.Host.Gateway(), d.rep.ID)
		if err != nil {
			return fail("the drill client could not connect to the gateway: " + err.Error())
		}
		d.client = c
	}
	pos := d.inv.position()
	ans, err := d.client.call(ctx, op, args)
	if err != nil {
		return fail("the call failed: " + err.Error())
	}
	ev := []string{fmt.Sprintf("the gateway answered %s", ans.Code)}
	if idx, reason, ok := d.inv.findDenial(pos, op, d.self); ok {
		ev = append(ev, fmt.Sprintf("audit entry #%d: action_denied, reason %s", idx, reason))
	} else {
		ev = append(ev, "the audit log's entry of the answer could not be read")
	}
	if !ans.IsError || ans.Code != want {
		return fail(ev...)
	}
	ev = append(ev, "nothing was sent: the answer comes before any approval and before any token is lent")
	return true, did, ev, ""
}

// callServer is callThrough for an authorization an upstream MCP server
// gets its tokens from: refused, the drill client sees none of the
// server's tools, and a call of one is refused for the account before
// anything is sent; passing, the server's tools are listed again (it
// reconnects once the account serves) and a call of one goes as far as an
// agent's would before its approval.
func (d *drill) callServer(ctx context.Context, server, want, what string) (bool, string, []string, string) {
	did := fmt.Sprintf("Yett's drill client (pid %d) listed the tools an agent sees and called a tool of the MCP server %q through the gateway, over an MCP session served as an agent's is.", d.self, server)
	if what == "passes" {
		did += " A drill's call stops where an agent's would ask for approval."
	}
	fail := func(ev ...string) (bool, string, []string, string) {
		if what == "passes" {
			return false, did, ev, "The server's tools do not pass Yett's local checks as they should: its owner looks at the evidence (the server's state is in MCP servers)."
		}
		return false, did, ev, "An agent could still reach the server's tools: report this."
	}
	if d.client == nil {
		c, err := dialDrill(ctx, d.inv.cfg.Host.Gateway(), d.rep.ID)
		if err != nil {
			return fail("the drill client could not connect to the gateway: " + err.Error())
		}
		d.client = c
	}
	prefix := server + "."
	listed := func() ([]string, error) {
		names, err := d.client.tools(ctx)
		var mine []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				mine = append(mine, n)
			}
		}
		return mine, err
	}
	mine, err := listed()
	if what == "passes" {
		// The server connects again once its account serves: give it the
		// time a connection takes.
		for deadline := time.Now().Add(serverBackTimeout); err == nil && len(mine) == 0 && time.Now().Before(deadline); mine, err = listed() {
			select {
			case <-ctx.Done():
				return fail("the drill was stopped")
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	if err != nil {
		return fail("the tools could not be listed: " + err.Error())
	}
	var ev []string
	tool := prefix + "drill-probe"
	switch {
	case what == "passes" && len(mine) == 0:
		return fail(fmt.Sprintf("the MCP server %q lists no tool to agents %s after its account was switched back on", server, serverBackTimeout))
	case what == "passes":
		tool = mine[0]
		ev = append(ev, fmt.Sprintf("%s lists its tools again: %s", server, strings.Join(mine, ", ")))
	case len(mine) > 0:
		return fail(fmt.Sprintf("agents still see %s's tools: %s", server, strings.Join(mine, ", ")))
	default:
		ev = append(ev, fmt.Sprintf("tools/list holds none of %s's tools", server))
	}
	pos := d.inv.position()
	ans, err := d.client.call(ctx, tool, map[string]any{})
	if err != nil {
		return fail(append(ev, "the call failed: "+err.Error())...)
	}
	ev = append(ev, fmt.Sprintf("the gateway answered %s to %s", ans.Code, tool))
	if idx, reason, ok := d.inv.findDenial(pos, tool, d.self); ok {
		ev = append(ev, fmt.Sprintf("audit entry #%d: action_denied, reason %s", idx, reason))
	} else {
		ev = append(ev, "the audit log's entry of the answer could not be read")
	}
	if !ans.IsError || ans.Code != want {
		return fail(ev...)
	}
	return true, did, append(ev, "nothing was sent to the server: the answer comes before any approval and before any token is lent"), ""
}

// serverBackTimeout bounds how long a drill waits for an MCP server to
// list its tools again once its account serves.
const serverBackTimeout = 15 * time.Second

// staysRefused: a second call is still refused, no tool an agent sees
// connects, reconnects or hands out a token, and no credential binding
// lets http.request reach the provider's endpoints with a stored secret.
func staysRefused(ctx context.Context, d *drill) (bool, string, []string, string) {
	did := "Yett's drill client called again and listed the tools an agent sees; Yett asked the vault whether any credential is bound to the provider's token or authorization endpoint."
	ok, _, ev, _ := d.callThrough(ctx, agentapi.CodeAuthRevoked, "refused")
	passed := ok
	if d.client != nil {
		names, err := d.client.tools(ctx)
		if err != nil {
			passed = false
			ev = append(ev, "the tools could not be listed: "+err.Error())
		} else {
			var odd []string
			others := d.inv.otherServers(ctx, d.fact.MCPServers)
			for _, n := range names {
				server, _, _ := strings.Cut(n, ".")
				// yett.request_access asks the person; it connects nothing and
				// returns no token. Another MCP server's tools use other
				// credentials; this account's servers' tools must be gone.
				if !slices.Contains(d.inv.catalogueNames(), n) && n != agentapi.ToolHTTPRequest && n != agentapi.ToolHTTPGet && n != agentapi.ToolStatus &&
					n != agentapi.ToolRequestAccess && !strings.HasPrefix(n, "ssh.") && !slices.Contains(others, server) {
					odd = append(odd, n)
				}
			}
			ev = append(ev, "tools an agent sees: "+strings.Join(names, ", "))
			if len(odd) > 0 {
				passed = false
				ev = append(ev, "tools that are neither Yett's calls, a named operation nor another MCP server's: "+strings.Join(odd, ", "))
			} else {
				ev = append(ev, "none connects or reconnects an account or returns a token: reconnection is offered to a person in the app and the CLI only")
			}
		}
	}
	if b := d.inv.cfg.Bindings; b != nil {
		for _, e := range d.fact.Endpoints {
			t, err := target.Parse(e)
			if err != nil {
				continue
			}
			cv, err := b.For(t)
			switch {
			case err == nil:
				passed = false
				ev = append(ev, fmt.Sprintf("credential %q is bound to %s: http.request could reach the provider's endpoint with it", cv.Name, t.Authority()))
			case errors.Is(err, vault.ErrNoCredential):
				ev = append(ev, "no credential is bound to "+t.Authority()+t.Path)
			default:
				passed = false
				ev = append(ev, "the vault could not say whether a credential is bound to "+t.Authority())
			}
		}
	}
	if !passed {
		return false, did, ev, adviceDisabled + " Something an agent can reach could bring it back or reach the provider: see the evidence."
	}
	return true, did, ev, ""
}

// auditNamesUsers reads the audit log for every call that used the
// authorization since it was connected or last drilled.
func auditNamesUsers(ctx context.Context, d *drill) (bool, string, []string, string) {
	since := d.fact.ConnectedAt
	if last, err := d.inv.lastDrill(d.rep.AuthorizationID); err == nil && last.After(since) {
		since = last
	}
	did := fmt.Sprintf("Yett read its audit log for every call that used it since %s.", since.UTC().Format(time.RFC3339))
	// Calls through an MCP server that gets its tokens from it name the
	// server as their credential.
	u, err := d.inv.usersSince(append([]string{d.rep.AuthorizationID}, d.fact.MCPServerIDs...), since)
	if err != nil {
		advice := "The audit log could not be read (is the vault locked, or is another Yett writing the log?)."
		return false, did, []string{err.Error()}, advice
	}
	if u.calls == 0 {
		return true, did, []string{fmt.Sprintf("no call used it since then (%d entries read)", u.read)}, ""
	}
	ev := []string{fmt.Sprintf("%s from %s used it (audit entries #%d to #%d)", count(u.calls, "call"), count(len(u.sessions), "session"), u.first, u.last)}
	ev = append(ev, "sessions: "+strings.Join(u.sessions, ", "))
	ev = append(ev, "processes: "+strings.Join(u.processes, ", "))
	return true, did, ev, ""
}

func suspendLocally(ctx context.Context, d *drill) (bool, string, []string, string) {
	c, id := d.inv.cfg.Custody, d.rep.AuthorizationID
	did := "Yett switched it off locally without any network call and ended every agent session that could use it. Its tokens stay sealed as they were, so when it is switched back on the next call may use the same access token."
	if err := c.Suspend(ctx, id, "unattended revocation drill"); err != nil {
		return false, did, []string{"custody refused: " + err.Error()}, "Nothing changed; the authorization serves as before."
	}
	d.suspended = true
	_, err := c.Check(id)
	if !errors.Is(err, oauth.ErrSuspended) {
		return false, did, []string{fmt.Sprintf("custody answers %v for it", err)}, ""
	}
	return true, did, []string{"custody answers for it: the authorization is suspended"}, ""
}

func probeRevocation(ctx context.Context, d *drill) (bool, string, []string, string) {
	p, err := d.inv.cfg.Custody.ProbeRevocation(ctx, d.rep.AuthorizationID)
	did := "Yett sent the provider's revocation endpoint a revocation, with this client's authentication, of a token not in service."
	if errors.Is(err, oauth.ErrNoRevocationEndpoint) {
		return false, did, []string{"the provider has no revocation endpoint Yett knows of"},
			"A full drill could not revoke it at the provider either: add the revocation endpoint in Connections, or note how to revoke the app's access in the provider's settings."
	}
	if err != nil {
		return false, did, []string{err.Error()}, "Check the provider and run the drill again."
	}
	var ev []string
	switch p.Token {
	case oauth.ProbeFreshToken:
		ev = append(ev, fmt.Sprintf("%s answered %s to the revocation of a fresh access token of a grant of its own", p.Endpoint, statusWords(p.Status)))
		if p.Introspected {
			ev = append(ev, "introspection: that token is "+activeWord(p.Active))
		}
	default:
		ev = append(ev, fmt.Sprintf("%s answered %s to the revocation of a token it never issued (RFC 7009 §2.2 answers 200 for any token once the client is authenticated)", p.Endpoint, statusWords(p.Status)))
	}
	if p.Status != http.StatusOK || p.Introspected && p.Active {
		return false, did, ev, "The provider's revocation endpoint did not accept the revocation: check it (Connections shows the endpoint), then run the drill again."
	}
	if p.Token == oauth.ProbeFreshToken && !p.Introspected {
		d.notChecked = append(d.notChecked, "that the probe's revoked token is inactive (the provider offers no introspection endpoint Yett knows of: add it in Connections)")
	}
	return true, did, ev, ""
}

func activeWord(active bool) string {
	if active {
		return "still active"
	}
	return "inactive"
}

func refreshTokenKept(ctx context.Context, d *drill) (bool, string, []string, string) {
	rc, err := d.inv.cfg.Custody.CheckRefreshToken(ctx, d.rep.AuthorizationID)
	did := "Yett asked the provider's introspection whether the refresh token it holds is still active; it sent nothing that changes it."
	switch {
	case err != nil:
		return false, did, []string{err.Error()}, "Run the drill again once the vault is unlocked."
	case !rc.Held:
		return true, did, []string{"Yett holds no refresh token for it (client credentials, or an attended connection): nothing to keep"}, ""
	case rc.NoEndpoint:
		d.notChecked = append(d.notChecked, "that the provider still honours the refresh token (it offers no introspection endpoint Yett knows of: add it in Connections)")
		return true, "Yett would ask the provider's introspection whether the refresh token it holds is still active, but it knows no introspection endpoint for this provider; nothing was sent.",
			[]string{"not checked: no introspection endpoint"}, ""
	case rc.Status == 0:
		return false, did, []string{"the provider's introspection could not be reached"}, "Check the provider (Connections shows its introspection endpoint), then run the drill again."
	case !rc.Introspected:
		return true, did, []string{fmt.Sprintf("the provider offers no introspection Yett can use (answered %s): not checked", statusWords(rc.Status))}, ""
	case !rc.Active:
		return false, did, []string{"introspection: the refresh token is inactive"}, "The provider no longer honours the refresh token: its owner reconnects it from Connections."
	}
	return true, did, []string{"introspection: the refresh token is active"}, ""
}

func reEnable(ctx context.Context, d *drill) (bool, string, []string, string) {
	c, id := d.inv.cfg.Custody, d.rep.AuthorizationID
	did := "Yett switched it back on."
	if err := c.Resume(ctx, id); err != nil {
		return false, did, []string{"custody refused: " + err.Error()}, ""
	}
	d.rep.Resumed = true
	if _, err := c.Check(id); err != nil {
		return false, did, []string{fmt.Sprintf("custody answers %v for it", err)}, "It does not serve: see its state in the Inventory."
	}
	return true, did, []string{"custody answers for it: active"}, ""
}

func selfPID() int { return os.Getpid() }

// users is who used an authorization, from the audit log.
type users struct {
	calls, read int
	first, last int64
	sessions    []string
	processes   []string
}

// usersSince reads the audit log for the calls that used ref since t.
func (inv *Inventory) usersSince(refs []string, t time.Time) (users, error) {
	var u users
	if inv.cfg.Trail == nil {
		return u, errors.New("this Yett does not read its audit log")
	}
	seenS, seenP := map[string]bool{}, map[string]bool{}
	for e, err := range inv.cfg.Trail.Entries(audit.Position{}) {
		if err != nil {
			return u, fmt.Errorf("the audit log could not be read: %w", err)
		}
		u.read++
		ev := &e.Event
		if ev.Type != audit.EventActionRequested || ev.Action == nil || !slices.Contains(refs, ev.Action.CredentialRef) || ev.Time.Before(t) {
			continue
		}
		if u.calls == 0 {
			u.first = e.Index
		}
		u.calls, u.last = u.calls+1, e.Index
		if ev.SessionID != "" && !seenS[ev.SessionID] {
			seenS[ev.SessionID] = true
			u.sessions = append(u.sessions, ev.SessionID)
		}
		if r := ev.Run; r != nil {
			p := fmt.Sprintf("pid %d %s (sha256 %s)", r.PID, filepath.Base(r.Executable), clip(r.ExecutableHash, 12))
			if !seenP[p] {
				seenP[p] = true
				u.processes = append(u.processes, p)
			}
		}
	}
	return u, nil
}

// position is where the audit log ends now, as far as the inventory has
// read it.
func (inv *Inventory) position() audit.Position {
	inv.catchUpUses()
	var raw string
	inv.db.Raw(`SELECT audit_position FROM settings WHERE id = 1`).Scan(&raw)
	var p audit.Position
	if raw != "" {
		if err := jsonUnmarshal(raw, &p); err != nil {
			return audit.Position{}
		}
	}
	return p
}

// findDenial finds the entry that recorded the drill client's refused call
// of op after pos.
func (inv *Inventory) findDenial(pos audit.Position, op string, pid int) (int64, audit.Reason, bool) {
	if inv.cfg.Trail == nil {
		return 0, "", false
	}
	for e, err := range inv.cfg.Trail.Entries(pos) {
		if err != nil {
			return 0, "", false
		}
		ev := &e.Event
		if ev.Type == audit.EventActionDenied && ev.Action != nil && ev.Action.Operation == op && ev.Run != nil && ev.Run.PID == pid {
			return e.Index, ev.Reason, true
		}
	}
	return 0, "", false
}

// lastDrill is when authorization id's last drill finished.
func (inv *Inventory) lastDrill(id string) (time.Time, error) {
	var f int64
	if err := inv.db.Raw(`SELECT COALESCE(MAX(finished_at), 0) FROM drill_reports WHERE row_id = ?`, id).Scan(&f).Error; err != nil {
		return time.Time{}, err
	}
	return store.FromUnixSeconds(f), nil
}

func jsonUnmarshal(raw string, v any) error { return json.Unmarshal([]byte(raw), v) }

// operationArgs makes arguments operation op accepts (operation.Example).
func (inv *Inventory) operationArgs(op string) (map[string]any, bool) {
	if inv.cfg.Catalogue == nil {
		return nil, false
	}
	for _, o := range inv.cfg.Catalogue.List() {
		if o.Name == op {
			return o.Example()
		}
	}
	return nil, false
}

// catalogueNames lists the named operations.
// otherServers are the names of the upstream MCP servers not in mine.
func (inv *Inventory) otherServers(ctx context.Context, mine []string) []string {
	facts, err := inv.facts(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range facts {
		if f.Kind == KindMCPServer && !slices.Contains(mine, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

func (inv *Inventory) catalogueNames() []string {
	if inv.cfg.Catalogue == nil {
		return nil
	}
	var names []string
	for _, o := range inv.cfg.Catalogue.List() {
		names = append(names, o.Name)
	}
	return names
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
