package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"filippo.io/age"
	"golang.org/x/term"

	"github.com/yettdev/yett/backend/instance"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
)

// passphraseSource asks a person for the vault passphrase. The real one
// reads the terminal with echo off; tests substitute their own.
type passphraseSource interface {
	Passphrase(prompt string) ([]byte, error)
}

// ttyPassphrase reads from the controlling terminal, never from stdin: a
// passphrase must not come from a pipe, a file or an agent's input.
type ttyPassphrase struct{ path string }

func defaultTTY() ttyPassphrase {
	if runtime.GOOS == "windows" {
		return ttyPassphrase{path: "CONIN$"}
	}
	return ttyPassphrase{path: "/dev/tty"}
}

var errNoTerminal = errors.New("no terminal to ask for the vault passphrase on (use --identity FILE, or run it in a terminal)")

func (t ttyPassphrase) Passphrase(prompt string) ([]byte, error) {
	f, err := os.OpenFile(t.path, os.O_RDWR, 0)
	if err != nil {
		return nil, errNoTerminal
	}
	defer f.Close()
	if !term.IsTerminal(int(f.Fd())) {
		return nil, errNoTerminal
	}
	p, err := readSecretAt(f, prompt)
	if err != nil {
		return nil, fmt.Errorf("reading the passphrase: %w", err)
	}
	return p, nil
}

// passphrases is the source auditShow uses; a test may replace it.
var passphrases passphraseSource = defaultTTY()

// identityFromVault unlocks the vault in dir just long enough to read the
// audit identity, then locks and closes it. It refuses while the desktop app
// runs: two processes writing one vault's manifest could make the other's
// next unlock report damage, and the app shows the log itself.
func identityFromVault(env *Env, dir string) (age.Identity, error) {
	if _, err := os.Stat(filepath.Join(dir, vault.FileName)); err != nil {
		return nil, fmt.Errorf("audit show: no vault in %s (use --identity FILE, or --vault-dir)", dir)
	}
	run, err := userdir.RuntimeDir(env.Getenv)
	if err != nil {
		return nil, err
	}
	if err := userdir.Ensure(run); err != nil {
		return nil, err
	}
	lock, err := instance.Acquire(run, "app", nil)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		return nil, errors.New("audit show: the Yett app is running; read the log in its Activity view, or quit it first")
	}
	if err != nil {
		return nil, fmt.Errorf("audit show: %w", err)
	}
	defer lock.Release()

	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit show: %w", err)
	}
	defer v.Close()
	switch st := v.Status(); st.State {
	case vault.StateLocked:
	case vault.StateUninitialised:
		return nil, fmt.Errorf("audit show: the vault in %s is not set up", dir)
	default:
		return nil, fmt.Errorf("audit show: the vault cannot be opened: %s", st.Damaged)
	}
	p, err := passphrases.Passphrase("Vault passphrase: ")
	if err != nil {
		return nil, fmt.Errorf("audit show: %w", err)
	}
	if err := v.Unlock(vault.Passphrase(p)); err != nil { // Unlock zeroes p
		return nil, fmt.Errorf("audit show: %w", err)
	}
	id, err := v.AuditIdentity()
	// Locking wipes the vault's keys; id is dropped when the caller returns.
	lockErr := v.Lock("cli_audit_show")
	if err != nil {
		return nil, fmt.Errorf("audit show: %w", err)
	}
	if lockErr != nil {
		return nil, fmt.Errorf("audit show: %w", lockErr)
	}
	return id, nil
}
