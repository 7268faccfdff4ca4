//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/witness"
)

func init() {
	commands["witness"] = command{
		usage:   witnessUsage,
		summary: "run a team witness that cosigns the machines' audit checkpoints",
		run:     runWitness,
	}
}

const witnessUsage = `usage: yett witness init --name NAME
       yett witness key
       yett witness serve [--listen 127.0.0.1:7380] --log-key VKEY... [--log-keys FILE] [--reader ROLE]...

A witness (C2SP tlog-witness) cosigns a machine's audit checkpoint only if
it extends the last one it cosigned for that machine, and never goes back:
a log cut or rewritten after a checkpoint was witnessed gets no cosignature
again. It keeps that state in PostgreSQL (its own witness_ tables).

init makes the witness's signing key, names it NAME (a URL-like name
without a scheme, such as witness.example.com/team) and seals it in the
vault with the address of the database, which it asks for at the terminal
(postgres://ROLE:PASSWORD@HOST/DB; never give it as an argument). It
checks the address by creating the witness's tables. It asks for the
vault passphrase, and replaces an earlier witness key only when you say so.

key prints the witness's verifier key, which the team's machines are given
to trust its cosignatures.

serve reads the key and the address from the vault (opened with the kernel
keyring when it holds the key, else the passphrase; like the other setup
commands it refuses while the app or yett serve runs, which may start again
once it has read them), locks the vault again,
and answers POST /add-checkpoint on a loopback address (put a tunnel or a
bastion in front to reach it from other machines) until interrupted. It
cosigns for the logs given by their audit verifier keys (--log-key, once
per machine, or --log-keys, a file with one key per line): a machine's key
is in <data dir>/audit/verifier.key. --reader lets a database role read
(never write) the witness's tables: the team's lead, whose view shows each
machine's last witnessed checkpoint and the checkpoints the witness refused.
`

func runWitness(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, witnessUsage)
		return nil
	}
	sub := map[string]func(context.Context, *Env, []string) error{
		"init": witnessInit, "key": witnessKey, "serve": witnessServe,
	}[args[0]]
	if sub == nil {
		fmt.Fprint(env.Stderr, witnessUsage)
		return withExitCode(2, fmt.Errorf("witness: unknown subcommand %q", args[0]))
	}
	return sub(ctx, env, args[1:])
}

func witnessFlags(env *Env, name string, args []string, def func(*flag.FlagSet)) error {
	fs := flag.NewFlagSet("yett witness "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	def(fs)
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 0 {
		return withExitCode(2, fmt.Errorf("witness %s: unexpected argument %q", name, fs.Arg(0)))
	}
	return nil
}

func witnessInit(ctx context.Context, env *Env, args []string) error {
	var name string
	if err := witnessFlags(env, "init", args, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "the witness's `NAME`, e.g. witness.example.com/team")
	}); err != nil {
		return err
	}
	key, err := witness.NewKey(name)
	if err != nil {
		return withExitCode(2, errors.New("witness init: --name is required: a name without spaces or '+', such as witness.example.com/team"))
	}
	s, err := openSetup(ctx, env, "witness init", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.v.WitnessKey().Open(); err == nil {
		ok, err := s.tty.Confirm(ctx, "This vault already holds a witness key. Replace it (what it cosigned stays valid, nothing new will be)?")
		if err != nil || !ok {
			return errors.New("witness init: the witness key was left as it is")
		}
	} else if !errors.Is(err, vault.ErrNoWitness) {
		return fmt.Errorf("witness init: %w", err)
	}
	db, err := s.tty.Secret(ctx, "The witness's PostgreSQL address (not shown as you type): ")
	if err != nil {
		return fmt.Errorf("witness init: %w", err)
	}
	rec := vault.WitnessRecord{Name: name, Seed: vault.NewSecret(key.Seed()), Database: vault.NewSecret(db)}
	clear(db)
	defer rec.Wipe()
	store, err := witness.OpenPGStore(ctx, string(rec.Database.Bytes()))
	if err != nil {
		return fmt.Errorf("witness init: the database: %w", err)
	}
	store.Close()
	if err := s.v.WitnessKey().Put(rec); err != nil {
		return fmt.Errorf("witness init: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Witness %q is set up; its verifier key (give it to the team's machines):\n%s\n", name, key.VerifierKey())
	return nil
}

func witnessKey(ctx context.Context, env *Env, args []string) error {
	if err := witnessFlags(env, "key", args, func(*flag.FlagSet) {}); err != nil {
		return err
	}
	key, db, err := readWitness(ctx, env, "witness key", setupRead)
	if err != nil {
		return err
	}
	db.Wipe()
	fmt.Fprintln(env.Stdout, key.VerifierKey())
	return nil
}

// readWitness opens the vault, reads the witness record and closes the
// vault again (locked): the key and the database address go on in this
// process's memory only.
func readWitness(ctx context.Context, env *Env, name string, kind setupKind) (*witness.Key, vault.Secret, error) {
	s, err := openSetup(ctx, env, name, kind)
	if err != nil {
		return nil, vault.Secret{}, err
	}
	defer s.close()
	rec, err := s.v.WitnessKey().Open()
	if errors.Is(err, vault.ErrNoWitness) {
		return nil, vault.Secret{}, fmt.Errorf("%s: this vault holds no witness key: run yett witness init first", name)
	}
	if err != nil {
		return nil, vault.Secret{}, fmt.Errorf("%s: %w", name, err)
	}
	key, err := witness.KeyFromSeed(rec.Name, rec.Seed.Bytes())
	rec.Seed.Wipe()
	if err != nil {
		rec.Database.Wipe()
		return nil, vault.Secret{}, fmt.Errorf("%s: %w", name, err)
	}
	return key, rec.Database, nil
}

// witnessListenDefault is where serve listens unless told otherwise.
const witnessListenDefault = "127.0.0.1:7380"

func witnessServe(ctx context.Context, env *Env, args []string) error {
	var listen, keysFile string
	var logKeys, readers listFlag
	if err := witnessFlags(env, "serve", args, func(fs *flag.FlagSet) {
		fs.Var(&readers, "reader", "a database `ROLE` that may read the witness's tables (repeatable)")
		fs.StringVar(&listen, "listen", witnessListenDefault, "loopback `ADDRESS` to listen on")
		fs.Var(&logKeys, "log-key", "a machine's audit verifier `KEY` (repeatable)")
		fs.StringVar(&keysFile, "log-keys", "", "`FILE` of audit verifier keys, one per line")
	}); err != nil {
		return err
	}
	if keysFile != "" {
		more, err := readKeyLines(keysFile)
		if err != nil {
			return withExitCode(2, fmt.Errorf("witness serve: %w", err))
		}
		logKeys = append(logKeys, more...)
	}
	if len(logKeys) == 0 {
		return withExitCode(2, errors.New("witness serve: give the machines' audit verifier keys (--log-key or --log-keys)"))
	}
	logs, err := witness.NewKnownLogs(logKeys...)
	if err != nil {
		return withExitCode(2, fmt.Errorf("witness serve: %w", err))
	}
	if err := checkLoopback(listen); err != nil {
		return withExitCode(2, fmt.Errorf("witness serve: %w", err))
	}
	key, db, err := readWitness(ctx, env, "witness serve", setupUse)
	if err != nil {
		return err
	}
	store, err := witness.OpenPGStore(ctx, string(db.Bytes()))
	db.Wipe()
	if err != nil {
		return fmt.Errorf("witness serve: the database: %w", err)
	}
	defer store.Close()
	if err := store.GrantRead(ctx, readers...); err != nil {
		return fmt.Errorf("witness serve: %w", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("witness serve: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, nil))
	srv := &http.Server{Handler: witness.New(key, logs, store, logger), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Stdout, "yett witness: %s listening on http://%s for %d logs\nverifier key: %s\n", key.Name(), ln.Addr(), len(logs), key.VerifierKey())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("witness serve: %w", err)
	}
	fmt.Fprintln(env.Stdout, "yett witness: stopped")
	return nil
}

// checkLoopback refuses an address that is not a loopback IP: the witness
// answers anyone who reaches it, and a tunnel or bastion is the way in.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen must be a loopback address (127.0.0.1:PORT or [::1]:PORT), not %q", addr)
	}
	return nil
}

// readKeyLines reads one verifier key per line, skipping blank lines and
// # comments.
func readKeyLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
