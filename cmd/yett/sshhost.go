//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["ssh-host"] = command{
		usage:   sshHostUsage,
		summary: "add, pin, list, show or remove the SSH hosts agents run commands on",
		run:     runSSHHost,
	}
}

const sshHostUsage = `usage: yett ssh-host add --name NAME --address HOST [--port PORT] --user USER [--key-file PATH]
                         [--approval per-call|writes|session] [--rule RULE ...]
                         [--timeout DURATION] [--record]
                         [--owner WHO] [--backup-revoker WHO]
                         [--environment development|staging|production]
       yett ssh-host pin NAME|ID --known-hosts | --from FILE | --trust-on-first-use
                         | --accept-presented
       yett ssh-host list
       yett ssh-host show NAME|ID
       yett ssh-host remove NAME|ID

Defines an SSH host an agent may run commands on with ssh.exec. Yett holds
the host's client key: without --key-file it makes an Ed25519 key and
prints its public half, the line to add to the host's
~/.ssh/authorized_keys; with --key-file it imports that private key
(OpenSSH, PEM or PKCS#8; a protected key's passphrase is asked for at the
terminal, opens the key once and is not kept). The file is read, never
changed: delete it yourself if Yett should be the key's only holder. The
private key is never shown again.

--approval per-call (the default) asks a card for every command; writes lets
commands a rule marks read-only go on the agent run's approval and asks for
every other one; session lets every command the rules allow go on the run's
approval. Each --rule is one command rule, as the app's form takes them
(--rule 'exact: uptime' --rule 'read-only prefix: journalctl -u nginx');
without rules every command may be asked for. --timeout bounds one command
(30s by default, at most 1h); --record keeps an encrypted recording of
each session. --owner, --backup-revoker and --environment go on the host's
row in the owner inventory: with all three it is under control from the
start.

An agent cannot use a host until its host key is pinned: pin takes the keys
your ~/.ssh/known_hosts holds for it (--known-hosts), the known_hosts lines,
ssh-keyscan output or public keys in FILE (--from), or the key the host
presents on a first connection that Yett's key authenticates
(--trust-on-first-use, runs nothing on the host, only for a host with no
pin). --accept-presented pins the key a pinned host presented instead of
its pin, once you checked the change is genuine. Pinning replaces the
host's pins and is recorded with each key's fingerprint.

add and pin ask for the vault passphrase every time; list, show and
remove open the vault with the kernel keyring when it holds the key, else
with the passphrase. Every command refuses while the app or yett serve
runs, and unless standard input is your own controlling terminal, except
list and show, which only read and run without a terminal when the
keyring opens the vault. Each change is recorded in the audit log with
"terminal" as its surface.
`

func runSSHHost(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, sshHostUsage)
		return withExitCode(2, errors.New("ssh-host: say add, pin, list, show or remove"))
	}
	switch args[0] {
	case "add":
		return sshHostAdd(ctx, env, args[1:])
	case "pin":
		return sshHostPin(ctx, env, args[1:])
	case "list", "show", "remove":
		return sshHostRead(ctx, env, args[0], args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, sshHostUsage)
		return nil
	}
	fmt.Fprint(env.Stderr, sshHostUsage)
	return withExitCode(2, fmt.Errorf("ssh-host: unknown subcommand %q", args[0]))
}

// maxKeyFile bounds a key file read; no SSH private key comes near it.
const maxKeyFile = 64 << 10

func sshHostAdd(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett ssh-host add", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, sshHostUsage) }
	var rules listFlag
	name := fs.String("name", "", "the host's name, as agents call it")
	address := fs.String("address", "", "its host name or IP address")
	port := fs.Int("port", 22, "its SSH port")
	user := fs.String("user", "", "the account Yett logs in as")
	keyFile := fs.String("key-file", "", "a private key to import (default: Yett makes an Ed25519 key)")
	approval := fs.String("approval", "per-call", "per-call, writes or session")
	fs.Var(&rules, "rule", "a command rule (repeat)")
	timeout := fs.Duration("timeout", vault.DefaultSSHHostTimeout, "the longest one command may run")
	record := fs.Bool("record", false, "keep an encrypted recording of each session")
	owner := fs.String("owner", "", "who answers for this host")
	backup := fs.String("backup-revoker", "", "who can cut it off when the owner cannot")
	environment := fs.String("environment", "", "development, staging or production")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	bad := func(format string, a ...any) error {
		return withExitCode(2, fmt.Errorf("ssh-host add: "+format, a...))
	}
	if fs.NArg() != 0 {
		return bad("unexpected %q", fs.Arg(0))
	}
	if *name == "" || *address == "" || *user == "" {
		fs.Usage()
		return bad("--name, --address and --user are required")
	}
	mode, err := approvalOf(*approval)
	if err != nil {
		return bad("--approval: %v", err)
	}
	if err := checkEnvironment(*environment); err != nil {
		return bad("%v", err)
	}
	ruleText := ""
	if len(rules) > 0 {
		ruleText = strings.Join(rules, "\n") + "\n"
		if _, err := sshaction.ParseRules(ruleText); err != nil {
			return bad("%s", strings.TrimPrefix(err.Error(), "ssh: "))
		}
	}
	var key []byte
	if *keyFile != "" {
		if key, err = readBounded(*keyFile, maxKeyFile); err != nil {
			return bad("the key file: %v", err)
		}
		defer clear(key)
	}
	s, err := openSetup(ctx, env, "ssh-host add", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	m := s.k.SSHHosts()
	if m == nil {
		return errors.New("ssh-host add: the SSH hosts service did not start (see the messages above)")
	}
	nh := sshhosts.NewHost{Name: *name, Address: *address, Port: *port, User: *user,
		Settings: sshhosts.Settings{Approval: mode, Rules: ruleText, Timeout: *timeout, Record: *record, Owner: *owner, BackupRevoker: *backup}}
	add := func(pass []byte) (sshhosts.HostView, error) {
		h := nh
		h.PrivateKey, h.Passphrase = append([]byte(nil), key...), pass // Add wipes both
		return m.Add(h)
	}
	h, err := add(nil)
	if errors.Is(err, sshaction.ErrPassphraseNeeded) {
		pass, perr := s.tty.Secret(ctx, "The key file's passphrase (not shown as you type): ")
		if perr != nil {
			return fmt.Errorf("ssh-host add: %w", perr)
		}
		h, err = add(pass)
	}
	if err != nil {
		return fmt.Errorf("ssh-host add: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	how := "Yett made its key"
	if *keyFile != "" {
		how = "its key is imported (the file is unchanged: delete it if Yett should be the key's only holder)"
	}
	fmt.Fprintf(env.Stdout, "Added SSH host %q (%s); %s. Add this line to %s's ~/.ssh/authorized_keys on %s:\n\n%s\n\n",
		h.Name, h.ID, how, h.User, h.Address, h.PublicKey)
	fmt.Fprintf(env.Stdout, "Then pin its host key: yett ssh-host pin %s --known-hosts (or --from FILE, or --trust-on-first-use).\n", h.Name)
	return s.declare(ctx, fmt.Sprintf("SSH host %q", h.Name), h.ID, "", "", *environment)
}

func sshHostPin(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(env.Stderr, sshHostUsage)
		return withExitCode(2, errors.New("ssh-host pin: name the host first"))
	}
	ref := args[0]
	fs := flag.NewFlagSet("yett ssh-host pin", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, sshHostUsage) }
	knownHosts := fs.Bool("known-hosts", false, "pin the keys ~/.ssh/known_hosts holds for the host")
	from := fs.String("from", "", "pin the keys in this file (known_hosts lines, ssh-keyscan output, public keys)")
	tofu := fs.Bool("trust-on-first-use", false, "connect and pin the key the host presents")
	accept := fs.Bool("accept-presented", false, "pin the key the host presented instead of its pin")
	if err := fs.Parse(args[1:]); err != nil {
		return withExitCode(2, err)
	}
	ways := 0
	for _, on := range []bool{*knownHosts, *from != "", *tofu, *accept} {
		if on {
			ways++
		}
	}
	if fs.NArg() != 0 || ways != 1 {
		fs.Usage()
		return withExitCode(2, errors.New("ssh-host pin: say one of --known-hosts, --from FILE, --trust-on-first-use or --accept-presented"))
	}
	var pasted []byte
	if *from != "" {
		var err error
		if pasted, err = readBounded(*from, 4<<20); err != nil {
			return withExitCode(2, fmt.Errorf("ssh-host pin: %v", err))
		}
	}
	s, err := openSetup(ctx, env, "ssh-host pin", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	m := s.k.SSHHosts()
	if m == nil {
		return errors.New("ssh-host pin: the SSH hosts service did not start (see the messages above)")
	}
	h, err := findSSHHost(m, ref)
	if err != nil {
		return fmt.Errorf("ssh-host pin: %w", err)
	}
	skipped := 0
	switch {
	case *knownHosts:
		h, skipped, err = m.PinFromKnownHosts(h.ID)
	case *from != "":
		h, err = m.PinPasted(h.ID, string(pasted))
	case *tofu:
		s.tty.Printf("Connecting to %s:%d as %s with Yett's key...\n", h.Address, h.Port, h.User)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		h, err = m.TrustOnFirstUse(cctx, h.ID)
		cancel()
	default:
		h, err = m.AcceptPresented(h.ID)
	}
	if err != nil {
		return fmt.Errorf("ssh-host pin: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Pinned %d host key(s) of %q:\n", len(h.Pins), h.Name)
	for _, p := range h.Pins {
		fmt.Fprintf(env.Stdout, "  %s %s\n", p.Type, p.Fingerprint)
	}
	if skipped > 0 {
		fmt.Fprintf(env.Stdout, "%d line(s) for the host were not pinned (markers or key types Yett does not pin).\n", skipped)
	}
	return nil
}

func sshHostRead(ctx context.Context, env *Env, sub string, args []string) error {
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(args) != want {
		fmt.Fprint(env.Stderr, sshHostUsage)
		return withExitCode(2, fmt.Errorf("ssh-host %s: bad arguments", sub))
	}
	s, err := openSetup(ctx, env, "ssh-host "+sub, readOr(sub != "remove"))
	if err != nil {
		return err
	}
	defer s.close()
	m := s.k.SSHHosts()
	if m == nil {
		return fmt.Errorf("ssh-host %s: the SSH hosts service did not start (see the messages above)", sub)
	}
	if sub == "list" {
		list, err := m.Hosts()
		if err != nil {
			return fmt.Errorf("ssh-host list: %w", err)
		}
		printSSHHosts(env.Stdout, list)
		return nil
	}
	h, err := findSSHHost(m, args[0])
	if err != nil {
		return fmt.Errorf("ssh-host %s: %w", sub, err)
	}
	if sub == "show" {
		printSSHHost(env.Stdout, h, s.controlOf(ctx, h.ID))
		return nil
	}
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Remove SSH host %q (%s) and its key? Agents lose it at once; its recordings stay.", h.Name, h.ID))
	if err != nil {
		return fmt.Errorf("ssh-host remove: %w", err)
	}
	if !ok {
		return errors.New("ssh-host remove: nothing was removed")
	}
	if err := m.Remove(h.ID); err != nil {
		return fmt.Errorf("ssh-host remove: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Removed SSH host %q (%s).\n", h.Name, h.ID)
	return nil
}

// findSSHHost picks by id or name (host names are unique).
func findSSHHost(m *sshhosts.Registry, ref string) (sshhosts.HostView, error) {
	list, err := m.Hosts()
	if err != nil {
		return sshhosts.HostView{}, err
	}
	for _, h := range list {
		if h.ID == ref || strings.EqualFold(h.Name, ref) {
			return h, nil
		}
	}
	return sshhosts.HostView{}, fmt.Errorf("no SSH host is named %q", ref)
}

func printSSHHosts(w io.Writer, list []sshhosts.HostView) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No SSH hosts. Add one with yett ssh-host add.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tUSER@ADDRESS\tAPPROVAL\tPINS\tPROBLEMS")
	for _, h := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s@%s:%d\t%s\t%d\t%d\n", h.ID, h.Name, h.User, h.Address, h.Port,
			sshApprovalWords(h.Approval), len(h.Pins), len(h.Problems))
	}
	tw.Flush()
}

func printSSHHost(w io.Writer, h sshhosts.HostView, control string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id", h.ID)
	row("name", h.Name)
	row("address", fmt.Sprintf("%s@%s:%d", h.User, h.Address, h.Port))
	row("approval", sshApprovalWords(h.Approval))
	for _, r := range strings.Split(strings.TrimSuffix(h.Rules, "\n"), "\n") {
		if r != "" {
			row("rule", r)
		}
	}
	row("timeout", h.Timeout.String())
	row("recording", map[bool]string{true: "on (encrypted)", false: "off"}[h.Record])
	row("key", h.KeyFingerprint+" (private half in the vault, never shown)")
	row("public key", h.PublicKey)
	for _, p := range h.Pins {
		row("host key", p.Type+" "+p.Fingerprint)
	}
	row("owner", h.Owner)
	row("backup revoker", h.BackupRevoker)
	if control != "" {
		row("inventory", control)
	}
	for _, p := range h.Problems {
		row("problem", p)
	}
	row("created", h.CreatedAt.Local().Format(time.DateTime))
	tw.Flush()
}

func sshApprovalWords(a vault.Approval) string {
	switch a {
	case vault.ApprovalSession:
		return "per agent session"
	case vault.ApprovalWrites:
		return "read-only rules per agent session, every other command per call"
	}
	return "every command"
}

// readBounded reads at most limit bytes of path, refusing a larger file.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		clear(b)
		return nil, fmt.Errorf("%s is larger than %d KiB", path, limit>>10)
	}
	return b, nil
}
