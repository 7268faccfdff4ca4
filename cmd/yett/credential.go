//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yettdev/yett/backend/prompt"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["credential"] = command{
		usage:   credentialUsage,
		summary: "add, list, show or remove HTTP credentials at this terminal",
		run:     runCredential,
	}
}

const credentialUsage = `usage: yett credential add --name NAME --host HOST [--host HOST ...] [--path PREFIX ...]
                           [--inject bearer | --inject header --header NAME --template 'token {secret}'
                            | --inject basic --username USER]
                           [--approval session|per-call|writes] [--secret-fd N]
       yett credential list
       yett credential show NAME|ID
       yett credential remove NAME|ID

Manages HTTP credentials with the same fields and rules as the app. The
secret is read at the controlling terminal with echo off, or with
--secret-fd N from a file descriptor you open for it (yett credential add
... --secret-fd 3 3<secret-file); never from the command line or the
environment. Once saved it is never shown again, not by show, not by the app.
--path defaults to /; --inject to bearer (Authorization: Bearer); --approval
to session (one approval per agent run; per-call asks for every request;
writes lets reads, GET and HEAD, go on the run's approval and asks for
every other request).

Every command asks for the vault passphrase at the terminal, refuses unless
standard input is your own controlling terminal and while the app or
yett serve runs, and each change is recorded in the audit log with
"terminal" as its surface.
`

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runCredential(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, credentialUsage)
		return withExitCode(2, errors.New("credential: say add, list, show or remove"))
	}
	switch args[0] {
	case "add":
		return credentialAdd(ctx, env, args[1:])
	case "list", "show", "remove":
		return credentialRead(ctx, env, args[0], args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, credentialUsage)
		return nil
	}
	fmt.Fprint(env.Stderr, credentialUsage)
	return withExitCode(2, fmt.Errorf("credential: unknown subcommand %q", args[0]))
}

func credentialAdd(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett credential add", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, credentialUsage) }
	var hosts, paths listFlag
	name := fs.String("name", "", "the credential's name")
	fs.Var(&hosts, "host", "a host it may be sent to (repeat for more)")
	fs.Var(&paths, "path", "a path prefix it may be sent to (repeat for more; default /)")
	inject := fs.String("inject", "bearer", "bearer, header or basic")
	header := fs.String("header", "", "header injection: the header's name")
	template := fs.String("template", "", "header injection: the value, with {secret} once")
	username := fs.String("username", "", "basic injection: the user name")
	approval := fs.String("approval", "session", "session, per-call or writes")
	secretFD := fs.Int("secret-fd", -1, "read the secret from this file descriptor instead of the terminal")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	nc := vault.NewCredential{
		Name:         *name,
		Injection:    vault.Injection{Format: vault.InjectionFormat(*inject), HeaderName: *header, Template: *template, Username: *username},
		Hosts:        hosts,
		PathPrefixes: paths,
		Approval:     vault.Approval(strings.ReplaceAll(*approval, "-", "_")),
	}
	if fs.NArg() != 0 || *name == "" || len(hosts) == 0 {
		fs.Usage()
		return withExitCode(2, errors.New("credential add: --name and at least one --host are required, and nothing else (the secret is asked for)"))
	}
	if err := checkBindings(hosts, paths); err != nil {
		return withExitCode(2, fmt.Errorf("credential add: %w", err))
	}
	s, err := openSetup(ctx, env, "credential add", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.warnOverlaps(ctx, hosts, paths); err != nil {
		return err
	}
	secret, err := readSecret(ctx, s, *secretFD, fmt.Sprintf("Secret for %q (not shown as you type): ", *name))
	if err != nil {
		return err
	}
	nc.Secret = vault.NewSecret(secret)
	clear(secret)
	defer nc.Secret.Wipe()
	c, err := s.v.Credentials().Add(nc)
	if err != nil {
		return fmt.Errorf("credential add: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Added credential %q (%s). Its secret is stored and will not be shown again.\n", c.Name, c.ID)
	return nil
}

// maxSecretRead bounds a secret read from a descriptor; the vault refuses
// anything over 16 KiB itself.
const maxSecretRead = 16 << 10

// readSecret reads the secret from fd when the person named one, else at
// the terminal with echo off.
func readSecret(ctx context.Context, s *setup, fd int, ask string) ([]byte, error) {
	var b []byte
	var err error
	if fd >= 0 {
		b, err = prompt.ReadFD(fd, maxSecretRead)
	} else {
		b, err = s.tty.Secret(ctx, ask)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the secret: %w", s.name, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: the secret is empty", s.name)
	}
	return b, nil
}

// checkBindings spells out bad hosts and paths before a secret is asked for.
func checkBindings(hosts, paths []string) error {
	for _, h := range hosts {
		if _, err := vault.ParseHostPattern(strings.TrimSpace(h)); err != nil {
			return err
		}
	}
	for _, p := range paths {
		if _, err := vault.ParsePathPrefix(strings.TrimSpace(p)); err != nil {
			return err
		}
	}
	return nil
}

// warnOverlaps says, as the app's form does, which stored credentials bind
// some of the same requests and which one a call would use, and asks
// whether to go on.
func (s *setup) warnOverlaps(ctx context.Context, hosts, paths []string) error {
	overlaps, err := s.v.Credentials().CheckBindings(hosts, paths, "")
	if err != nil || len(overlaps) == 0 {
		return nil
	}
	for _, o := range overlaps {
		what := "overlaps"
		if o.Duplicate {
			what = "has the same hosts and paths as"
		}
		s.tty.Printf("This credential %s %q: a call to %s would use %s.\n", what, o.Other.Name, o.Example, winnerWords(o))
	}
	ok, err := s.tty.Confirm(ctx, "Add it anyway?")
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if !ok {
		return fmt.Errorf("%s: nothing was added", s.name)
	}
	return nil
}

func winnerWords(o vault.Overlap) string {
	switch o.Winner {
	case vault.WinnerCandidate:
		return "this one"
	case vault.WinnerOther:
		return fmt.Sprintf("%q", o.Other.Name)
	case vault.WinnerThird:
		return fmt.Sprintf("%q", o.WinnerName)
	}
	return "neither (the call is refused until one is narrowed)"
}

func credentialRead(ctx context.Context, env *Env, sub string, args []string) error {
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(args) != want {
		fmt.Fprint(env.Stderr, credentialUsage)
		return withExitCode(2, fmt.Errorf("credential %s: bad arguments", sub))
	}
	s, err := openSetup(ctx, env, "credential "+sub, setupUse)
	if err != nil {
		return err
	}
	defer s.close()
	list, err := s.v.Credentials().List()
	if err != nil {
		return fmt.Errorf("credential %s: %w", sub, err)
	}
	if sub == "list" {
		printCredentials(env.Stdout, list)
		return nil
	}
	c, err := findCredential(list, args[0])
	if err != nil {
		return fmt.Errorf("credential %s: %w", sub, err)
	}
	if sub == "show" {
		printCredential(env.Stdout, c)
		return nil
	}
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Remove credential %q (%s)? Agents lose it at once.", c.Name, c.ID))
	if err != nil {
		return fmt.Errorf("credential remove: %w", err)
	}
	if !ok {
		return errors.New("credential remove: nothing was removed")
	}
	if err := s.v.Credentials().Remove(c.ID); err != nil {
		return fmt.Errorf("credential remove: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Removed credential %q (%s).\n", c.Name, c.ID)
	return nil
}

// findCredential picks by id, or by a name only one credential has.
func findCredential(list []vault.CredentialView, ref string) (vault.CredentialView, error) {
	var byName []vault.CredentialView
	for _, c := range list {
		if c.ID == ref {
			return c, nil
		}
		if c.Name == ref {
			byName = append(byName, c)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return vault.CredentialView{}, fmt.Errorf("no credential is named %q", ref)
	}
	return vault.CredentialView{}, fmt.Errorf("%d credentials are named %q: name one by its id (yett credential list)", len(byName), ref)
}

func printCredentials(w io.Writer, list []vault.CredentialView) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No credentials. Add one with yett credential add.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tINJECTION\tHOSTS\tPATHS\tAPPROVAL")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Injection.Format, strings.Join(c.Hosts, ","),
			strings.Join(c.PathPrefixes, ","), approvalWords(string(c.Approval)))
	}
	tw.Flush()
}

func printCredential(w io.Writer, c vault.CredentialView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id", c.ID)
	row("name", c.Name)
	switch c.Injection.Format {
	case vault.InjectHeader:
		row("injection", fmt.Sprintf("header %s: %s", c.Injection.HeaderName, c.Injection.Template))
	case vault.InjectBasic:
		row("injection", fmt.Sprintf("basic, user %s", c.Injection.Username))
	default:
		row("injection", "Authorization: Bearer {secret}")
	}
	row("hosts", strings.Join(c.Hosts, ", "))
	row("paths", strings.Join(c.PathPrefixes, ", "))
	row("approval", approvalWords(string(c.Approval)))
	row("created", c.CreatedAt.Local().Format(time.DateTime))
	row("version", fmt.Sprint(c.Version))
	row("secret", "stored; write-only, never shown")
	tw.Flush()
}

func approvalWords(a string) string {
	switch a {
	case string(vault.ApprovalPerCall):
		return "per call"
	case string(vault.ApprovalWrites):
		return "reads per agent session, each write per call"
	}
	return "per agent session"
}
