//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["mcp-server"] = command{
		usage:   mcpServerUsage,
		summary: "add, set, list, show or remove the MCP servers whose tools Yett gives agents",
		run:     runMCPServer,
	}
}

const mcpServerUsage = `usage: yett mcp-server add --name NAME --command PATH [--arg ARG ...] [--env NAME=VALUE ...]
                           [--secret-env NAME ...]
       yett mcp-server add --name NAME --url URL [--secret-header NAME ...]
                           [--oauth [--client-id ID [--client-auth none|secret]] [--scope SCOPE ...]
                            [--callback-port PORT]]
                           [--approval writes|per-call|session] [--tool TOOL=MODE ...]
                           [--owner WHO] [--backup-revoker WHO]
                           [--environment development|staging|production] [--secret-fd N]
       yett mcp-server set NAME|ID [--approval MODE] [--tool TOOL=MODE ...] [--tool TOOL=default ...]
                           [--owner WHO] [--backup-revoker WHO]
       yett mcp-server list
       yett mcp-server show NAME|ID
       yett mcp-server remove NAME|ID

Defines an MCP server whose tools Yett lists to every agent as NAME.TOOL
(github.create_issue) and calls itself, through the same approvals, journal
and audit log as http.request. A local server (--command, an executable;
a bare name is looked up in PATH now) is started by Yett as its own child,
never the agent's, with only PATH, HOME, the locale and TMPDIR of Yett's
environment, the --env values, and each --secret-env variable filled from
the vault. A remote server (--url, Streamable HTTP; https unless it is on
loopback) gets each --secret-header on Yett's own requests, to its own host
only ("Authorization" with the value "Bearer <token>").

--oauth connects a remote server that asks for OAuth, as the MCP
authorization spec says: Yett asks the server without a token, reads its
protected resource metadata (RFC 9728) and its authorization server's,
registers itself there as a client (RFC 7591) unless --client-id names one
you registered (with the redirect http://127.0.0.1/callback, or your
--callback-port), and prints the address where you review and consent in
a browser. The account is kept under OAuth custody like any other (yett
connect): its refresh token sealed in the vault, refreshed once at a time,
an inventory row with its owner and backup revoker, drills. Every token
request names the server as the resource (RFC 8707), and each request to
the server carries a fresh access token, never shown to an agent.

Each secret is asked for at the controlling terminal with echo off, or,
when there is exactly one, read from --secret-fd N; never from the command
line or the environment. It is never shown again, and whatever a server
returns is cleaned of it before an agent reads it.

--approval says how its tools are approved: writes (the default) lets a tool
that says it only reads go on the agent run's approval and asks a card for
every call of any other tool; per-call asks for every call; session lets
every call go on the run's approval. --tool TOOL=MODE sets one tool's mode
whatever the server says about it (--tool get-env=per-call); set changes
these and who answers for the server without restarting it (TOOL=default
gives a tool back the server's mode); it cannot change what Yett starts or
calls, or the secrets: remove the server and add it again for that.

Every command asks for the vault passphrase at the terminal and refuses
unless standard input is your own controlling terminal and while the app
or yett serve runs; each change is recorded in the audit log with
"terminal" as its surface.
`

func runMCPServer(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, mcpServerUsage)
		return withExitCode(2, errors.New("mcp-server: say add, set, list, show or remove"))
	}
	switch args[0] {
	case "add":
		return mcpServerAdd(ctx, env, args[1:])
	case "set":
		return mcpServerSet(ctx, env, args[1:])
	case "list", "show", "remove":
		return mcpServerRead(ctx, env, args[0], args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, mcpServerUsage)
		return nil
	}
	fmt.Fprint(env.Stderr, mcpServerUsage)
	return withExitCode(2, fmt.Errorf("mcp-server: unknown subcommand %q", args[0]))
}

// approvalOf reads an approval mode as the commands spell it.
func approvalOf(s string) (vault.Approval, error) {
	a := vault.Approval(strings.ReplaceAll(s, "-", "_"))
	switch a {
	case vault.ApprovalSession, vault.ApprovalPerCall, vault.ApprovalWrites:
		return a, nil
	}
	return "", fmt.Errorf("%q is not an approval mode (writes, per-call or session)", s)
}

func mcpServerAdd(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett mcp-server add", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, mcpServerUsage) }
	var argv, envs, secretEnv, secretHeader, tools listFlag
	name := fs.String("name", "", "the server's name: the prefix of its tools")
	command := fs.String("command", "", "a local server's executable")
	fs.Var(&argv, "arg", "an argument of the command (repeat, in order)")
	fs.Var(&envs, "env", "NAME=VALUE in the server's environment, not secret (repeat)")
	fs.Var(&secretEnv, "secret-env", "an environment variable filled from the vault (repeat)")
	u := fs.String("url", "", "a remote server's Streamable HTTP endpoint")
	fs.Var(&secretHeader, "secret-header", "a request header filled from the vault (repeat)")
	approval := fs.String("approval", "writes", "writes, per-call or session")
	fs.Var(&tools, "tool", "TOOL=MODE: one tool's approval mode (repeat)")
	owner := fs.String("owner", "", "who answers for this server")
	backup := fs.String("backup-revoker", "", "who can cut it off when the owner cannot")
	secretFD := fs.Int("secret-fd", -1, "read the one secret from this file descriptor instead of the terminal")
	useOAuth := fs.Bool("oauth", false, "connect the remote server's OAuth authorization (discovered)")
	var scopes listFlag
	var oreq upstream.OAuthRequest
	fs.StringVar(&oreq.ClientID, "client-id", "", "--oauth: a client you registered with its authorization server")
	clientAuth := fs.String("client-auth", "none", "--oauth: none, or secret (asked for at the terminal)")
	fs.Var(&scopes, "scope", "--oauth: a scope to ask for instead of the server's (repeat)")
	fs.StringVar(&oreq.Environment, "environment", "", "development, staging or production: the server's (and with --oauth its account's)")
	fs.IntVar(&oreq.CallbackPort, "callback-port", 0, "--oauth: the loopback port the browser comes back to")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	bad := func(format string, a ...any) error {
		return withExitCode(2, fmt.Errorf("mcp-server add: "+format, a...))
	}
	if fs.NArg() != 0 || *name == "" || (*command == "") == (*u == "") {
		fs.Usage()
		return bad("--name and either --command or --url are required, and nothing else (secrets are asked for)")
	}
	ns := vault.NewMCPServer{Name: *name, Args: argv, Env: map[string]string{}, URL: *u, Secrets: map[string]vault.Secret{},
		MCPServerSettings: vault.MCPServerSettings{Owner: *owner, BackupRevoker: *backup, Tools: map[string]vault.Approval{}}}
	var err error
	if ns.Approval, err = approvalOf(*approval); err != nil {
		return bad("--approval: %v", err)
	}
	for _, t := range tools {
		tool, mode, ok := strings.Cut(t, "=")
		if !ok || tool == "" {
			return bad("--tool takes TOOL=MODE, not %q", t)
		}
		if ns.Tools[tool], err = approvalOf(mode); err != nil {
			return bad("--tool %s: %v", tool, err)
		}
	}
	secrets := []string(secretHeader)
	if *command != "" {
		ns.Transport = vault.TransportStdio
		if len(secretHeader) > 0 {
			return bad("--secret-header is for a remote server (--url)")
		}
		// The path is resolved now, once, and kept: what Yett starts does
		// not follow a later PATH.
		if ns.Command, err = exec.LookPath(*command); err != nil {
			return bad("--command: %v", err)
		}
		if ns.Command, err = filepath.Abs(ns.Command); err != nil {
			return bad("--command: %v", err)
		}
		for _, e := range envs {
			k, v, ok := strings.Cut(e, "=")
			if !ok {
				return bad("--env takes NAME=VALUE, not %q", e)
			}
			ns.Env[k] = v
		}
		secrets = secretEnv
	} else {
		ns.Transport = vault.TransportHTTP
		if len(argv) > 0 || len(envs) > 0 || len(secretEnv) > 0 {
			return bad("--arg, --env and --secret-env are for a local server (--command)")
		}
	}
	clientSecret := *useOAuth && *clientAuth == "secret"
	switch {
	case !*useOAuth && (oreq.ClientID != "" || len(scopes) > 0 || oreq.CallbackPort != 0 || *clientAuth != "none"):
		return bad("--client-id, --client-auth, --scope and --callback-port go with --oauth")
	case oreq.Environment != "" && !slices.Contains(oauth.Environments, oreq.Environment):
		return bad("--environment is development, staging or production")
	case *useOAuth && ns.Transport != vault.TransportHTTP:
		return bad("--oauth is for a remote server (--url)")
	case *useOAuth && !slices.Contains(oauth.Environments, oreq.Environment):
		return bad("--oauth needs --environment development, staging or production")
	case *useOAuth && *clientAuth != "none" && *clientAuth != "secret":
		return bad("--client-auth is none or secret")
	case clientSecret && oreq.ClientID == "":
		return bad("--client-auth secret goes with the --client-id it belongs to")
	}
	asked := len(secrets)
	if clientSecret {
		asked++
	}
	if *secretFD >= 0 && asked != 1 {
		return bad("--secret-fd reads one secret; this server has %d", asked)
	}
	// Every rule the vault checks, before a passphrase or a secret is
	// asked for.
	probe := ns
	probe.Secrets = map[string]vault.Secret{}
	for _, s := range secrets {
		probe.Secrets[s] = vault.NewSecret([]byte("probe"))
	}
	if *useOAuth {
		probe.OAuth = "az-probe"
	}
	if err := vault.CheckMCPServer(probe); err != nil {
		return bad("%v", err)
	}
	s, err := openSetup(ctx, env, "mcp-server add", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	defer func() {
		for _, sec := range ns.Secrets {
			sec.Wipe()
		}
	}()
	for _, sn := range secrets {
		b, err := readSecret(ctx, s, *secretFD, fmt.Sprintf("Value of %s for %q (not shown as you type): ", sn, *name))
		if err != nil {
			return err
		}
		ns.Secrets[sn] = vault.NewSecret(b)
		clear(b)
	}
	if *useOAuth {
		oreq.Server, oreq.URL, oreq.Scopes, oreq.Owner, oreq.BackupRevoker = *name, *u, scopes, *owner, *backup
		if clientSecret {
			if oreq.ClientSecret, err = readSecret(ctx, s, *secretFD, "Client secret (not shown as you type): "); err != nil {
				return err
			}
			defer clear(oreq.ClientSecret)
		}
		if ns.OAuth, err = s.connectMCPServer(ctx, oreq); err != nil {
			return err
		}
	}
	v, err := s.v.MCPServers().Add(ns)
	if err != nil && ns.OAuth != "" {
		// The authorization would serve nothing: it goes, at the provider
		// too, rather than stay a grant no server uses.
		if m := s.k.State().OAuth; m != nil {
			m.Revoke(context.WithoutCancel(ctx), ns.OAuth)
		}
		return fmt.Errorf("mcp-server add: %w (the authorization just connected was revoked)", err)
	}
	if err != nil {
		return fmt.Errorf("mcp-server add: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Added MCP server %q (%s). Agents see its tools as %s.TOOL once Yett serves them (the app or yett serve).\n",
		v.Name, v.ID, v.Name)
	// The inventory keeps a server's environment (its record keeps who
	// answers for it): with all three the row is under control at once.
	return s.declare(ctx, fmt.Sprintf("MCP server %q", v.Name), v.ID, "", "", oreq.Environment)
}

// connectMCPServer connects a remote server's OAuth authorization at the
// terminal: discovery, registration, the consent in a browser.
func (s *setup) connectMCPServer(ctx context.Context, req upstream.OAuthRequest) (string, error) {
	m := s.k.State().OAuth
	if m == nil {
		return "", errors.New("mcp-server add: OAuth custody did not start (see the messages above)")
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	f, err := s.k.ConnectMCPServerOAuth(cctx, req)
	cancel()
	if err != nil {
		return "", fmt.Errorf("mcp-server add: %w", err)
	}
	// Everything discovery found was chosen by the server or its
	// authorization server: it is shown escaped, as agents' text is.
	d := f.Discovery
	name := req.URL
	if d.ResourceName != "" {
		name = d.ResourceName[:min(len(d.ResourceName), 80)]
	}
	s.tty.Printf("%s is authorized by %s; its tokens are asked for the resource %s", terminalSafe(strings.ToValidUTF8(name, "")),
		terminalSafe(d.Issuer), terminalSafe(d.Resource))
	if len(d.Scopes) > 0 {
		s.tty.Printf(" with the scopes %s", terminalSafe(strings.Join(d.Scopes, " ")))
	}
	s.tty.Printf(".\n")
	if f.Registered {
		s.tty.Printf("Yett registered itself there as a client (dynamic client registration).\n")
	}
	end, err := s.waitFlow(ctx, m, f.Flow)
	if err != nil {
		return "", fmt.Errorf("mcp-server add: %w", err)
	}
	return end.AuthorizationID, nil
}

// mcpServerSet changes a server's settings. It asks for the passphrase
// every time, as an add does: a mode that asks less widens authority.
func mcpServerSet(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(env.Stderr, mcpServerUsage)
		return withExitCode(2, errors.New("mcp-server set: name the server first"))
	}
	ref := args[0]
	fs := flag.NewFlagSet("yett mcp-server set", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, mcpServerUsage) }
	var tools listFlag
	approval := fs.String("approval", "", "writes, per-call or session")
	fs.Var(&tools, "tool", "TOOL=MODE, or TOOL=default (repeat)")
	owner := fs.String("owner", "\x00", "who answers for this server")
	backup := fs.String("backup-revoker", "\x00", "who can cut it off when the owner cannot")
	if err := fs.Parse(args[1:]); err != nil {
		return withExitCode(2, err)
	}
	bad := func(format string, a ...any) error {
		return withExitCode(2, fmt.Errorf("mcp-server set: "+format, a...))
	}
	if fs.NArg() != 0 {
		return bad("unexpected %q", fs.Arg(0))
	}
	type toolMode struct {
		tool string
		mode vault.Approval // "" gives the tool back the server's mode
	}
	var modes []toolMode
	for _, t := range tools {
		tool, mode, ok := strings.Cut(t, "=")
		if !ok || tool == "" {
			return bad("--tool takes TOOL=MODE, not %q", t)
		}
		tm := toolMode{tool: tool}
		if mode != "default" {
			a, err := approvalOf(mode)
			if err != nil {
				return bad("--tool %s: %v", tool, err)
			}
			tm.mode = a
		}
		modes = append(modes, tm)
	}
	var newApproval vault.Approval
	if *approval != "" {
		a, err := approvalOf(*approval)
		if err != nil {
			return bad("--approval: %v", err)
		}
		newApproval = a
	}
	s, err := openSetup(ctx, env, "mcp-server set", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	list, err := s.v.MCPServers().List()
	if err != nil {
		return fmt.Errorf("mcp-server set: %w", err)
	}
	i := slices.IndexFunc(list, func(v vault.MCPServerView) bool { return v.ID == ref || v.Name == ref })
	if i < 0 {
		return fmt.Errorf("mcp-server set: no MCP server is named %q", ref)
	}
	m := list[i]
	set := vault.MCPServerSettings{Approval: m.Approval, Tools: maps.Clone(m.Tools), Owner: m.Owner, BackupRevoker: m.BackupRevoker}
	if set.Tools == nil {
		set.Tools = map[string]vault.Approval{}
	}
	if newApproval != "" {
		set.Approval = newApproval
	}
	for _, tm := range modes {
		if tm.mode == "" {
			delete(set.Tools, tm.tool)
		} else {
			set.Tools[tm.tool] = tm.mode
		}
	}
	if *owner != "\x00" {
		set.Owner = *owner
	}
	if *backup != "\x00" {
		set.BackupRevoker = *backup
	}
	v, err := s.v.MCPServers().Update(m.ID, set)
	if err != nil {
		return fmt.Errorf("mcp-server set: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Saved MCP server %q (%s).\n", v.Name, v.ID)
	printMCPServer(env.Stdout, v, s.controlOf(ctx, v.ID))
	return nil
}

// controlOf is the owner inventory's word on row id: under control, or
// what it misses; "" when the inventory did not start.
func (s *setup) controlOf(ctx context.Context, id string) string {
	inv := s.k.State().Inventory
	if inv == nil {
		return ""
	}
	rows, err := inv.Rows(ctx, inventory.Filter{})
	if err != nil {
		return ""
	}
	for _, r := range rows {
		if r.ID == id && r.Controlled {
			return "under control (" + r.Environment + ")"
		}
		if r.ID == id {
			return "not under control: missing " + strings.Join(r.Missing, ", ")
		}
	}
	return ""
}

func mcpServerRead(ctx context.Context, env *Env, sub string, args []string) error {
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(args) != want {
		fmt.Fprint(env.Stderr, mcpServerUsage)
		return withExitCode(2, fmt.Errorf("mcp-server %s: bad arguments", sub))
	}
	s, err := openSetup(ctx, env, "mcp-server "+sub, readOr(sub != "remove"))
	if err != nil {
		return err
	}
	defer s.close()
	list, err := s.v.MCPServers().List()
	if err != nil {
		return fmt.Errorf("mcp-server %s: %w", sub, err)
	}
	if sub == "list" {
		printMCPServers(env.Stdout, list)
		return nil
	}
	i := slices.IndexFunc(list, func(v vault.MCPServerView) bool { return v.ID == args[0] || v.Name == args[0] })
	if i < 0 {
		return fmt.Errorf("mcp-server %s: no MCP server is named %q", sub, args[0])
	}
	m := list[i]
	if sub == "show" {
		printMCPServer(env.Stdout, m, s.controlOf(ctx, m.ID))
		return nil
	}
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Remove MCP server %q (%s)? Agents lose its tools at once, and Yett stops it.", m.Name, m.ID))
	if err != nil {
		return fmt.Errorf("mcp-server remove: %w", err)
	}
	if !ok {
		return errors.New("mcp-server remove: nothing was removed")
	}
	if err := s.v.MCPServers().Remove(m.ID); err != nil {
		return fmt.Errorf("mcp-server remove: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Removed MCP server %q (%s).\n", m.Name, m.ID)
	return nil
}

func mcpServerWhere(m vault.MCPServerView) string {
	if m.Transport == vault.TransportHTTP {
		return m.URL
	}
	return strings.Join(append([]string{m.Command}, m.Args...), " ")
}

func printMCPServers(w io.Writer, list []vault.MCPServerView) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No MCP servers. Add one with yett mcp-server add.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTRANSPORT\tRUNS\tSECRETS\tAPPROVAL")
	for _, m := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Name, m.Transport, mcpServerWhere(m), strings.Join(m.SecretNames, ","),
			strings.ReplaceAll(string(m.Approval), "_", "-"))
	}
	tw.Flush()
}

func printMCPServer(w io.Writer, m vault.MCPServerView, control string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id", m.ID)
	row("name", m.Name)
	row("transport", m.Transport)
	if m.Transport == vault.TransportHTTP {
		row("url", m.URL)
		if m.OAuth != "" {
			row("oauth", m.OAuth+" (an account under OAuth custody: yett accounts lists and revokes it)")
		}
		row("secret headers", strings.Join(m.SecretNames, ", ")+" (stored; write-only, never shown)")
	} else {
		row("command", mcpServerWhere(m))
		keys := make([]string, 0, len(m.Env))
		for k := range m.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			row("env", k+"="+m.Env[k])
		}
		row("secret env", strings.Join(m.SecretNames, ", ")+" (stored; write-only, never shown)")
	}
	row("approval", strings.ReplaceAll(string(m.Approval), "_", "-"))
	tools := make([]string, 0, len(m.Tools))
	for t, a := range m.Tools {
		tools = append(tools, t+"="+strings.ReplaceAll(string(a), "_", "-"))
	}
	slices.Sort(tools)
	if len(tools) > 0 {
		row("tools", strings.Join(tools, ", "))
	}
	row("owner", m.Owner)
	row("backup revoker", m.BackupRevoker)
	if control != "" {
		row("inventory", control)
	}
	row("created", m.CreatedAt.Local().Format(time.DateTime))
	row("version", fmt.Sprint(m.Version))
	tw.Flush()
}
