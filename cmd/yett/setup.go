//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/instance"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/prompt"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/vault/kernelkeyring"
)

// originTerminal is the surface the setup commands' audit entries carry.
const originTerminal = "terminal"

// setup is one setup command's session: the person at the controlling
// terminal; the data directory held against the app and `yett serve` for
// the command's length (the audit log takes one writer, and two processes
// writing one vault's manifest would make the other's next unlock report
// damage); the vault, unlocked at the terminal; and a keeper that serves no
// agents and records what the person does with "terminal" as its surface.
type setup struct {
	name    string // "credential add", for messages
	tty     *prompt.Terminal
	dataDir string
	app     *instance.Primary
	v       *vault.Vault
	k       *keeper.Keeper
}

// errNoTerminal keeps its exit code (2) with the command's name.
func refuseNoTerminal(name string) error {
	return withExitCode(2, fmt.Errorf("%s: %w", name, prompt.ErrNoTerminal))
}

// setupKind says what a setup command does with the vault.
type setupKind int

const (
	// setupCreate: the vault must not exist yet (yett init).
	setupCreate setupKind = iota
	// setupRead: as setupUse, and also without a terminal when the
	// kernel keyring holds the key: commands that only read (list, show),
	// so a script or a pipe may call them. What they print is what the
	// keyring would open for any program of the user anyway (names, hosts,
	// modes; never a secret), and they change nothing.
	setupRead
	// setupUse: the vault is unlocked, with the kernel keyring when it
	// holds the key: commands that take authority away (remove, revoke).
	setupUse
	// setupWiden: the vault is unlocked with the passphrase, every time,
	// whatever the keyring holds: commands that add or widen authority
	// (credential add, operation add, connect). A program of the user can
	// give any command a terminal of its own (script(1), a pty); the
	// keyring opens yett serve and the app, it never authorizes a change.
	setupWiden
)

// readOr is setupRead for a subcommand that only reads, else setupUse.
func readOr(reads bool) setupKind {
	if reads {
		return setupRead
	}
	return setupUse
}

// openSetup opens the session for a command of kind.
func openSetup(ctx context.Context, env *Env, name string, kind setupKind) (*setup, error) {
	wantVault := kind != setupCreate
	in, _ := env.Stdin.(*os.File)
	tty, err := prompt.Open(in)
	if err != nil && kind != setupRead {
		return nil, refuseNoTerminal(name)
	}
	s := &setup{name: name, tty: tty}
	if err := s.open(env, wantVault); err != nil {
		s.close()
		return nil, err
	}
	if wantVault {
		if err := s.unlock(ctx, kind == setupUse || kind == setupRead); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

func (s *setup) open(env *Env, wantVault bool) error {
	var err error
	if s.dataDir, err = userdir.DataDir(env.Getenv); err != nil {
		return err
	}
	run, err := userdir.RuntimeDir(env.Getenv)
	if err != nil {
		return err
	}
	// Before yett init there is nothing to read or change, and nothing is
	// made: no directory, no database (TestReadBeforeInitCreatesNothing).
	if _, err := os.Lstat(filepath.Join(s.dataDir, vault.FileName)); wantVault && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: there is no vault yet: run yett init first", s.name)
	}
	for _, d := range []string{s.dataDir, run} {
		if err := userdir.Ensure(d); err != nil {
			return err
		}
	}
	// The app's own single-instance lock: while a setup command holds it
	// the app does not start, and while the app runs the command refuses
	// (and the app's window comes to the front).
	s.app, err = instance.Acquire(run, "app", nil)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		return fmt.Errorf("%s: the Yett app is running for this user (its window was brought to the front): make the change there, or quit the app first", s.name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if s.v, err = vault.Open(s.dataDir, vault.Options{Keyring: kernelkeyring.Default()}); err != nil {
		return fmt.Errorf("%s: opening the vault: %w", s.name, err)
	}
	switch st := s.v.Status(); {
	case st.State == vault.StateDamaged:
		return fmt.Errorf("%s: the vault is damaged (%s); it was left as it is", s.name, st.Damaged)
	case wantVault && st.State == vault.StateUninitialised:
		return fmt.Errorf("%s: there is no vault yet: run yett init first", s.name)
	case !wantVault && st.State != vault.StateUninitialised:
		return fmt.Errorf("%s: a vault already exists in %s", s.name, s.dataDir)
	}
	s.k, err = keeper.Open(keeper.Config{
		DataDir: s.dataDir, RuntimeDir: run, Vault: s.v, Origin: originTerminal, NoGateway: true,
		Logger: slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if st := s.k.State(); st.AuditHeldElsewhere {
		return fmt.Errorf("%s: yett serve is running for this user and writes the audit log, which takes one writer: type quit at its terminal, make the change, then start it again", s.name)
	} else if wantVault && !st.AuditWriting {
		return fmt.Errorf("%s: nothing is changed without a record, and %s", s.name, lowerFirst(strings.TrimSuffix(st.AuditProblem, ".")))
	}
	return nil
}

// unlock opens the vault with the kernel keyring when keyring allows it and
// the keyring holds the key, otherwise with the passphrase typed at the
// terminal (three tries).
func (s *setup) unlock(ctx context.Context, keyring bool) error {
	if keyring && s.v.Status().KeyringEnabled {
		err := s.v.UnlockWithKeyringContext(ctx)
		if err == nil {
			return nil
		}
		if s.tty == nil {
			return withExitCode(2, fmt.Errorf("%s: the kernel keyring does not hold this vault's key here (%w), and without a terminal there is no one to type the passphrase: run it in an interactive terminal", s.name, err))
		}
		s.tty.Printf("The keyring does not hold this vault's key here; the passphrase opens it.\n")
	}
	if s.tty == nil {
		return withExitCode(2, fmt.Errorf("%s: without a terminal this command reads the vault only with keyring unlock (yett init --keyring), which is off for this vault: run it in an interactive terminal to type the passphrase", s.name))
	}
	for i := 0; i < 3; i++ {
		p, err := s.tty.Secret(ctx, "Yett vault passphrase: ")
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		err = s.v.Unlock(vault.Passphrase(p)) // zeroes p
		var th *vault.ThrottledError
		switch {
		case err == nil:
			return nil
		case errors.Is(err, vault.ErrWrongPassphrase):
			s.tty.Printf("Wrong passphrase.\n")
		case errors.As(err, &th):
			return fmt.Errorf("%s: too many wrong passphrases; try again in %s", s.name, th.RetryAfter.Round(time.Second))
		default:
			return fmt.Errorf("%s: unlock: %w", s.name, err)
		}
	}
	return fmt.Errorf("%s: the vault stayed locked", s.name)
}

// recorded says whether everything so far reached the audit log. A change
// is recorded after it is made (as the app's are); if the log refused it,
// the person must hear so, and the command fails.
func (s *setup) recorded() error {
	st := s.k.State()
	if st.AuditWriting && st.AuditProblem == "" {
		return nil
	}
	return fmt.Errorf("%s: the change was made, but %s", s.name, lowerFirst(strings.TrimSuffix(orText(st.AuditProblem, "the audit log is not being written"), ".")))
}

// declare records who answers for a row just added (what, "credential
// \"x\"", names it) on the owner inventory: each of owner, backup revoker
// and environment given is written, so a row added with all three is under
// control from the start.
func (s *setup) declare(ctx context.Context, what, id, owner, backupRevoker, env string) error {
	if owner == "" && backupRevoker == "" && env == "" {
		return nil
	}
	inv := s.k.State().Inventory
	if inv == nil {
		return fmt.Errorf("%s: %s was added, but the owner inventory did not start, so who answers for it was not recorded", s.name, what)
	}
	if err := inv.Declare(ctx, id, owner, backupRevoker, env); err != nil {
		return fmt.Errorf("%s: %s was added, but who answers for it was not recorded: %w", s.name, what, err)
	}
	return nil
}

// close locks the vault (recorded), closes the keeper, the vault, the app
// lock and the terminal.
func (s *setup) close() {
	if s.k != nil {
		s.k.Close()
	}
	if s.v != nil {
		s.v.Close()
	}
	if s.app != nil {
		s.app.Release()
	}
	if s.tty != nil {
		s.tty.Close()
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
