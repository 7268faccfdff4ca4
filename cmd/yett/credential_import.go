//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/yettdev/yett/backend/credimport"
	"github.com/yettdev/yett/backend/prompt"
	"github.com/yettdev/yett/backend/vault"
)

// importOptions is what yett credential import was told on its command
// line.
type importOptions struct {
	file string
	all  bool
	// hosts and paths are --host NAME=HOST and --path NAME=PREFIX, by the
	// entry's name as the list shows it.
	hosts, paths map[string][]string
	injection    vault.Injection
	approval     vault.Approval // "" when not given
	rotateEvery  int
	owner        string
	backup       string
	environment  string
}

// scripted: the entries and their hosts were chosen on the command line,
// so nothing is asked but the passphrase.
func (o *importOptions) scripted() bool { return o.all || len(o.hosts) > 0 }

// whoGiven: the command line said who answers for what is imported.
func (o *importOptions) whoGiven() bool {
	return o.owner != "" || o.backup != "" || o.environment != ""
}

func parseImportArgs(env *Env, args []string) (*importOptions, error) {
	fs := flag.NewFlagSet("yett credential import", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, credentialUsage) }
	var hosts, paths listFlag
	all := fs.Bool("all", false, "import every entry that can be, asking nothing but the passphrase")
	fs.Var(&hosts, "host", "NAME=HOST: import entry NAME bound to HOST (repeat; asks nothing but the passphrase)")
	fs.Var(&paths, "path", "NAME=PREFIX: a path prefix for entry NAME (repeat; default /)")
	inject := fs.String("inject", "bearer", "bearer, header or basic, for all of them")
	header := fs.String("header", "", "header injection: the header's name")
	template := fs.String("template", "", "header injection: the value, with {secret} once")
	username := fs.String("username", "", "basic injection: the user name (default: each entry's)")
	approval := fs.String("approval", "", "session, per-call or writes, for all of them")
	rotateEvery := fs.Int("rotate-every", 0, "remind to rotate each secret after this many days (0: never)")
	owner := fs.String("owner", "", "who answers for them")
	backup := fs.String("backup-revoker", "", "who can cut them off when the owner cannot")
	environment := fs.String("environment", "", "development, staging or production")
	bad := func(format string, a ...any) error {
		return withExitCode(2, fmt.Errorf("credential import: "+format, a...))
	}
	// FILE may come before, between or after the flags.
	o := &importOptions{}
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, withExitCode(2, err)
		}
		if fs.NArg() == 0 {
			break
		}
		if o.file != "" {
			return nil, bad("name one file (%q and %q)", o.file, fs.Arg(0))
		}
		o.file, rest = fs.Arg(0), fs.Args()[1:]
	}
	switch o.file {
	case "":
		fs.Usage()
		return nil, bad("name the file to import from")
	case "-":
		return nil, bad("standard input is your terminal here: name a file")
	}
	o.all, o.rotateEvery = *all, *rotateEvery
	o.owner, o.backup, o.environment = *owner, *backup, *environment
	o.injection = vault.Injection{Format: vault.InjectionFormat(*inject), HeaderName: *header, Template: *template, Username: *username}
	if *approval != "" {
		a, err := approvalOf(*approval)
		if err != nil {
			return nil, bad("--approval: %v", err)
		}
		o.approval = a
	}
	if err := checkRotateEvery(o.rotateEvery); err != nil {
		return nil, bad("%v", err)
	}
	if err := checkEnvironment(o.environment); err != nil {
		return nil, bad("%v", err)
	}
	if err := checkInjection(o.injection); err != nil {
		return nil, bad("%v", err)
	}
	var err error
	if o.hosts, err = namedValues("--host", hosts, func(h string) error { return checkBindings([]string{h}, nil) }); err != nil {
		return nil, bad("%v", err)
	}
	if o.paths, err = namedValues("--path", paths, func(p string) error { return checkBindings(nil, []string{p}) }); err != nil {
		return nil, bad("%v", err)
	}
	if len(o.paths) > 0 && !o.scripted() {
		return nil, bad("--path goes with --host or --all; without them each entry's paths are asked for")
	}
	return o, nil
}

// namedValues reads NAME=VALUE flags by NAME. A name may hold '=' (an
// item's title), a host or a path never does, so the last '=' splits.
func namedValues(flagName string, list []string, check func(string) error) (map[string][]string, error) {
	out := map[string][]string{}
	for _, kv := range list {
		i := strings.LastIndexByte(kv, '=')
		if i <= 0 || i == len(kv)-1 {
			return nil, fmt.Errorf("%s is NAME=VALUE, the entry's name as the list shows it (%s GITHUB_TOKEN=api.github.com)", flagName, flagName)
		}
		name, v := kv[:i], strings.TrimSpace(kv[i+1:])
		if err := check(v); err != nil {
			return nil, fmt.Errorf("%s %s: %w", flagName, name, err)
		}
		out[name] = append(out[name], v)
	}
	return out, nil
}

// checkInjection refuses, before anything is read, an injection no entry
// could take. A basic injection's user name may come from each entry.
func checkInjection(in vault.Injection) error {
	switch in.Format {
	case vault.InjectBearer:
		if in.HeaderName != "" || in.Template != "" || in.Username != "" {
			return errors.New("--header, --template and --username go with --inject header or basic")
		}
	case vault.InjectHeader:
		if in.HeaderName == "" || strings.Count(in.Template, vault.SecretPlaceholder) != 1 || in.Username != "" {
			return fmt.Errorf("--inject header takes --header NAME and --template with %s once", vault.SecretPlaceholder)
		}
	case vault.InjectBasic:
		if in.HeaderName != "" || in.Template != "" {
			return errors.New("--inject basic takes no --header or --template")
		}
	default:
		return errors.New("--inject is bearer, header or basic")
	}
	return nil
}

// requireTerminal refuses, as openSetup would, unless standard input is
// the person's controlling terminal: checked before the file is read, so
// a command that cannot go on holds nothing of it.
func requireTerminal(env *Env, name string) error {
	in, _ := env.Stdin.(*os.File)
	tty, err := prompt.Open(in)
	if err != nil {
		return refuseNoTerminal(name)
	}
	return tty.Close()
}

// credentialImport imports credentials from FILE (see credentialUsage).
// It asks for the passphrase every time: it adds authority.
func credentialImport(ctx context.Context, env *Env, args []string) error {
	o, err := parseImportArgs(env, args)
	if err != nil {
		return err
	}
	if err := requireTerminal(env, "credential import"); err != nil {
		return err
	}
	data, err := readImportFile(o.file)
	if err != nil {
		return fmt.Errorf("credential import: %w", err)
	}
	src, err := credimport.Read(data)
	clear(data)
	if err != nil {
		// credimport's errors never quote the input.
		return fmt.Errorf("credential import: Yett cannot import %s: %w", terminalSafe(o.file), err)
	}
	defer src.Wipe()
	if err := checkNamed(o, src); err != nil {
		return withExitCode(2, fmt.Errorf("credential import: %w", err))
	}
	s, err := openSetup(ctx, env, "credential import", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	r := &importRun{s: s, o: o, src: src}
	if r.taken, err = s.credentialNames(); err != nil {
		return err
	}
	importable := 0
	for i := range src.Entries {
		if src.Entries[i].Importable() {
			importable++
		}
	}
	s.tty.Printf("%s holds %s: %d entries, %d of them can be imported. Values are never shown.\n",
		terminalSafe(o.file), formatWords(src.Format), len(src.Entries), importable)
	writeImportList(s.tty.Writer(), src, r.taken)
	if importable == 0 {
		return errors.New("credential import: nothing in it can be imported (each entry says why)")
	}
	var chosen []int
	if o.scripted() {
		chosen = o.chosen(src)
	} else if chosen, err = r.choose(ctx); err != nil {
		return err
	}
	if err := r.shared(ctx); err != nil {
		return err
	}
	err = r.importAll(ctx, chosen)
	r.report(env.Stdout)
	if err != nil {
		return err
	}
	return r.outcome(len(chosen))
}

// checkNamed: every entry --host or --path names is in the file, so a
// typo is said before the passphrase is asked.
func checkNamed(o *importOptions, src *credimport.Source) error {
	names := map[string]bool{}
	for i := range src.Entries {
		names[src.Entries[i].SuggestedName()] = true
	}
	for flagName, m := range map[string]map[string][]string{"--host": o.hosts, "--path": o.paths} {
		for name := range m {
			if !names[name] {
				return fmt.Errorf("%s names \"%s\", which is no entry of %s (run yett credential import %s to see the list)",
					flagName, terminalSafe(name), terminalSafe(o.file), terminalSafe(o.file))
			}
		}
	}
	return nil
}

// chosen is what a scripted import takes: with --all every entry that can
// be imported, and every entry --host names (one that cannot is then
// reported with why), in the file's order.
func (o *importOptions) chosen(src *credimport.Source) []int {
	var out []int
	for i := range src.Entries {
		e := &src.Entries[i]
		if _, named := o.hosts[e.SuggestedName()]; named || o.all && e.Importable() {
			out = append(out, i)
		}
	}
	return out
}

// credentialNames are the stored credentials' names, lower-cased.
func (s *setup) credentialNames() (map[string]bool, error) {
	list, err := s.v.Credentials().List()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	taken := make(map[string]bool, len(list))
	for _, c := range list {
		taken[strings.ToLower(c.Name)] = true
	}
	return taken, nil
}
