//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/prompt"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["credential"] = command{
		usage:   credentialUsage,
		summary: "add, edit, rotate, import, list, show or remove HTTP credentials",
		run:     runCredential,
	}
}

const credentialUsage = `usage: yett credential add --name NAME --host HOST [--host HOST ...] [--path PREFIX ...]
                           [--inject bearer | --inject header --header NAME --template 'token {secret}'
                            | --inject basic --username USER]
                           [--approval session|per-call|writes] [--secret-fd N]
                           [--rotate-every DAYS] [--owner WHO] [--backup-revoker WHO]
                           [--environment development|staging|production]
       yett credential edit NAME|ID [--name NEW] [--host HOST ...] [--path PREFIX ...]
                           [--inject ...] [--approval MODE] [--rotate-every DAYS]
                           [--owner WHO] [--backup-revoker WHO] [--environment ENV]
       yett credential rotate NAME|ID [--secret-fd N]
       yett credential import FILE [--approval MODE] [--rotate-every DAYS] [--inject ...]
                           [--owner WHO] [--backup-revoker WHO] [--environment ENV]
                           [--all] [--host NAME=HOST ...] [--path NAME=PREFIX ...]
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
every other request). --rotate-every DAYS sets a reminder to rotate the
secret that many days after it was entered (1 to 3650; 0, the default, sets
none): list and show say when it is due, as the app does. --owner,
--backup-revoker and --environment go on the credential's row in the owner
inventory: with all three it is under control from the start.

edit changes what you name and keeps the rest and the secret: --host or
--path given once replaces the whole list. A call that chose the
credential before the edit and has not sent yet is refused, so nothing goes
out under the old bindings. rotate replaces the secret (asked for as add
does) and keeps everything else; calls already sent finish with the old
one, so revoke it at the provider once they are done.

import brings in credentials kept elsewhere: a .env file, a Bitwarden
export (.json or .csv, not an encrypted one) or a 1Password 8 CSV export,
told apart by their content. FILE is read once, read-only, and never
changed. The terminal lists its entries by number: each one's name, line
and user name, what its value looks like and how long it is, and the host
it suggests, or why it cannot be imported; never a value. You choose
entries (1,3-4 or all); the approval and who answers for them apply to all
and are asked for unless --approval, --owner, --backup-revoker or
--environment give them; then each entry's name (a name a stored
credential has is refused), hosts and path prefixes are asked, the
suggestions being the defaults, and each entry is added in turn. --inject
and --rotate-every apply to all (--inject basic takes each entry's user
name unless --username names one). Scripted, nothing is asked but the
passphrase: --host NAME=HOST (repeat) imports the entry listed as NAME
bound to HOST, --all imports every entry that can be, each bound to its
--host hosts or else to the host it suggests, with its --path NAME=PREFIX
prefixes or /; approval is session unless --approval says otherwise, and
an entry whose name is taken, that has no --host and suggests no host, or
whose bindings overlap a stored credential's is not imported. The result
lists what was added and what was not, and why, and the command exits 1
when a chosen entry could not be imported. The values read are wiped when
it ends. Delete an export once it is imported: any program of yours can
read it.

add, edit, rotate and import ask for the vault passphrase every time;
list, show and remove open the vault with the kernel keyring when it holds
the key (yett init --keyring), else with the passphrase. Every command
refuses while the app or yett serve runs, and unless standard input is
your own controlling terminal, except list and show, which only read and
run without a terminal (in a script, through a pipe) when the keyring
opens the vault. Each change is recorded in the audit log with "terminal"
as its surface.
`

func runCredential(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, credentialUsage)
		return withExitCode(2, errors.New("credential: say add, edit, rotate, import, list, show or remove"))
	}
	switch args[0] {
	case "add":
		return credentialAdd(ctx, env, args[1:])
	case "edit":
		return credentialEdit(ctx, env, args[1:])
	case "rotate":
		return credentialRotate(ctx, env, args[1:])
	case "import":
		return credentialImport(ctx, env, args[1:])
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
	rotateEvery := fs.Int("rotate-every", 0, "remind to rotate the secret after this many days (0: never)")
	secretFD := fs.Int("secret-fd", -1, "read the secret from this file descriptor instead of the terminal")
	owner := fs.String("owner", "", "who answers for this credential")
	backup := fs.String("backup-revoker", "", "who can cut it off when the owner cannot")
	environment := fs.String("environment", "", "development, staging or production")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if err := checkEnvironment(*environment); err != nil {
		return withExitCode(2, fmt.Errorf("credential add: %w", err))
	}
	nc := vault.NewCredential{
		Name:         *name,
		Injection:    vault.Injection{Format: vault.InjectionFormat(*inject), HeaderName: *header, Template: *template, Username: *username},
		Hosts:        hosts,
		PathPrefixes: paths,
		Approval:     vault.Approval(strings.ReplaceAll(*approval, "-", "_")),

		RotateEveryDays: *rotateEvery,
	}
	if err := checkRotateEvery(*rotateEvery); err != nil {
		return withExitCode(2, fmt.Errorf("credential add: %w", err))
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
	return s.declare(ctx, fmt.Sprintf("credential %q", c.Name), c.ID, *owner, *backup, *environment)
}

// checkEnvironment refuses an environment the inventory does not know
// before anything is asked ("" is none given).
func checkEnvironment(e string) error {
	if e == "" || slices.Contains(inventory.Environments, e) {
		return nil
	}
	return errors.New("--environment is development, staging or production")
}

// credentialEdit changes a credential's name, bindings, injection or
// approval, and who answers for it, keeping its secret. It asks for the
// passphrase: an edit may widen what the credential reaches.
func credentialEdit(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(env.Stderr, credentialUsage)
		return withExitCode(2, errors.New("credential edit: name the credential first"))
	}
	ref := args[0]
	fs := flag.NewFlagSet("yett credential edit", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, credentialUsage) }
	var hosts, paths listFlag
	name := fs.String("name", "", "a new name")
	fs.Var(&hosts, "host", "a host it may be sent to (repeat; replaces the list)")
	fs.Var(&paths, "path", "a path prefix (repeat; replaces the list)")
	inject := fs.String("inject", "", "bearer, header or basic")
	header := fs.String("header", "", "header injection: the header's name")
	template := fs.String("template", "", "header injection: the value, with {secret} once")
	username := fs.String("username", "", "basic injection: the user name")
	approval := fs.String("approval", "", "session, per-call or writes")
	rotateEvery := fs.Int("rotate-every", -1, "remind to rotate the secret after this many days (0: never)")
	owner := fs.String("owner", "", "who answers for this credential")
	backup := fs.String("backup-revoker", "", "who can cut it off when the owner cannot")
	environment := fs.String("environment", "", "development, staging or production")
	if err := fs.Parse(args[1:]); err != nil {
		return withExitCode(2, err)
	}
	bad := func(format string, a ...any) error {
		return withExitCode(2, fmt.Errorf("credential edit: "+format, a...))
	}
	if fs.NArg() != 0 {
		return bad("unexpected %q", fs.Arg(0))
	}
	changed := 0
	fs.Visit(func(*flag.Flag) { changed++ })
	if changed == 0 {
		return bad("say what to change (--name, --host, --path, --inject, --approval, --rotate-every, --owner, --backup-revoker, --environment)")
	}
	if *rotateEvery != -1 {
		if err := checkRotateEvery(*rotateEvery); err != nil {
			return bad("%v", err)
		}
	}
	if err := checkEnvironment(*environment); err != nil {
		return bad("%v", err)
	}
	var mode vault.Approval
	if *approval != "" {
		a, err := approvalOf(*approval)
		if err != nil {
			return bad("--approval: %v", err)
		}
		mode = a
	}
	if err := checkBindings(hosts, paths); err != nil {
		return bad("%v", err)
	}
	s, err := openSetup(ctx, env, "credential edit", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	list, err := s.v.Credentials().List()
	if err != nil {
		return fmt.Errorf("credential edit: %w", err)
	}
	c, err := findCredential(list, ref)
	if err != nil {
		return fmt.Errorf("credential edit: %w", err)
	}
	e := vault.CredentialEdit{Name: c.Name, Injection: c.Injection, Hosts: c.Hosts, PathPrefixes: c.PathPrefixes, Approval: c.Approval,
		RotateEveryDays: c.RotateEveryDays}
	if *rotateEvery != -1 {
		e.RotateEveryDays = *rotateEvery
	}
	if *name != "" {
		e.Name = *name
	}
	if len(hosts) > 0 {
		e.Hosts = hosts
	}
	if len(paths) > 0 {
		e.PathPrefixes = paths
	}
	if *inject != "" {
		e.Injection = vault.Injection{Format: vault.InjectionFormat(*inject), HeaderName: *header, Template: *template, Username: *username}
	} else if *header != "" || *template != "" || *username != "" {
		return bad("--header, --template and --username go with --inject")
	}
	if mode != "" {
		e.Approval = mode
	}
	if len(hosts) > 0 || len(paths) > 0 {
		if err := s.warnOverlapsExcept(ctx, e.Hosts, e.PathPrefixes, c.ID, "Save it anyway?"); err != nil {
			return err
		}
	}
	v, err := s.v.Credentials().Update(c.ID, c.Version, e)
	if err != nil {
		return fmt.Errorf("credential edit: %w", err)
	}
	if err := s.declare(ctx, fmt.Sprintf("credential %q", v.Name), v.ID, *owner, *backup, *environment); err != nil {
		return err
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Saved credential %q (%s).\n", v.Name, v.ID)
	printCredential(env.Stdout, v, s.controlOf(ctx, v.ID))
	return nil
}

// credentialRotate replaces a credential's secret, keeping the rest.
func credentialRotate(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(env.Stderr, credentialUsage)
		return withExitCode(2, errors.New("credential rotate: name the credential first"))
	}
	ref := args[0]
	fs := flag.NewFlagSet("yett credential rotate", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, credentialUsage) }
	secretFD := fs.Int("secret-fd", -1, "read the new secret from this file descriptor instead of the terminal")
	if err := fs.Parse(args[1:]); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 0 {
		return withExitCode(2, fmt.Errorf("credential rotate: unexpected %q", fs.Arg(0)))
	}
	s, err := openSetup(ctx, env, "credential rotate", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	list, err := s.v.Credentials().List()
	if err != nil {
		return fmt.Errorf("credential rotate: %w", err)
	}
	c, err := findCredential(list, ref)
	if err != nil {
		return fmt.Errorf("credential rotate: %w", err)
	}
	b, err := readSecret(ctx, s, *secretFD, fmt.Sprintf("New secret for %q (not shown as you type): ", c.Name))
	if err != nil {
		return err
	}
	secret := vault.NewSecret(b)
	clear(b)
	defer secret.Wipe()
	v, err := s.v.Credentials().Rotate(c.ID, c.Version, secret)
	if err != nil {
		return fmt.Errorf("credential rotate: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Rotated the secret of credential %q (%s); it is now at version %d. Calls already sent finish with the old secret: revoke it at the provider once they are done.\n",
		v.Name, v.ID, v.Version)
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
	return s.warnOverlapsExcept(ctx, hosts, paths, "", "Add it anyway?")
}

// warnOverlapsExcept is warnOverlaps for credential except's new bindings.
func (s *setup) warnOverlapsExcept(ctx context.Context, hosts, paths []string, except, ask string) error {
	overlaps, err := s.v.Credentials().CheckBindings(hosts, paths, except)
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
	ok, err := s.tty.Confirm(ctx, ask)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if !ok {
		return fmt.Errorf("%s: nothing was changed", s.name)
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
	s, err := openSetup(ctx, env, "credential "+sub, readOr(sub != "remove"))
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
		printCredential(env.Stdout, c, s.controlOf(ctx, c.ID))
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
	fmt.Fprintln(tw, "ID\tNAME\tINJECTION\tHOSTS\tPATHS\tAPPROVAL\tSECRET SET")
	for _, c := range list {
		set := ageWords(time.Since(c.SecretSetAt))
		if c.RotationDue {
			set += ", rotation due"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Injection.Format, strings.Join(c.Hosts, ","),
			strings.Join(c.PathPrefixes, ","), approvalWords(string(c.Approval)), set)
	}
	tw.Flush()
}

func printCredential(w io.Writer, c vault.CredentialView, control string) {
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
	row("secret set", fmt.Sprintf("%s (%s)", c.SecretSetAt.Local().Format(time.DateTime), ageWords(time.Since(c.SecretSetAt))))
	row("rotate", rotationWords(c, time.Now()))
	row("version", fmt.Sprint(c.Version))
	row("secret", "stored; write-only, never shown")
	if control != "" {
		row("inventory", control)
	}
	tw.Flush()
}

// ageWords says how old something is, as a person reads it: "today",
// "3 days ago", "5 months ago".
func ageWords(d time.Duration) string {
	days := int(d.Hours() / 24)
	switch {
	case days < 1:
		return "today"
	case days == 1:
		return "1 day ago"
	case days < 60:
		return fmt.Sprintf("%d days ago", days)
	case days < 730:
		return fmt.Sprintf("%d months ago", days/30)
	}
	return fmt.Sprintf("%d years ago", days/365)
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
