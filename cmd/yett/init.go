//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["init"] = command{
		usage:   initUsage,
		summary: "create the vault at this terminal (for yett serve, without the window)",
		run:     runInit,
	}
}

const initUsage = `usage: yett init [--keyring]

Creates the vault, as the app's first screen does: the passphrase is typed
twice at the controlling terminal with echo off (at least 12 characters; the
same advice as the app is shown), and stretched with the same Argon2id
parameters. --keyring also keeps a key in the Linux kernel keyring, so the
setup commands open the vault without the passphrase until the next reboot
(yett serve always asks for it).

Refuses unless standard input is your own controlling terminal, while the
app or yett serve runs, and when a vault already exists.
`

func runInit(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett init", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, initUsage) }
	keyring := fs.Bool("keyring", false, "also keep a key in the kernel keyring")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return withExitCode(2, errors.New("init: bad arguments"))
	}
	s, err := openSetup(ctx, env, "init", setupCreate)
	if err != nil {
		return err
	}
	defer s.close()
	p, err := s.choosePassphrase(ctx)
	if err != nil {
		return err
	}
	defer clear(p)
	s.tty.Printf("Creating the vault (deriving the key takes a moment)...\n")
	useKeyring := *keyring
	err = s.v.CreateContext(ctx, vault.Passphrase(bytes.Clone(p)), useKeyring)
	if errors.Is(err, vault.ErrKeyringUnavailable) {
		s.tty.Printf("The kernel keyring is not available here, so nothing was created.\n")
		ok, cerr := s.tty.Confirm(ctx, "Create the vault with the passphrase only?")
		if cerr != nil || !ok {
			return errors.New("init: no vault was created")
		}
		useKeyring = false
		err = s.v.CreateContext(ctx, vault.Passphrase(bytes.Clone(p)), false)
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	how := "your passphrase"
	if useKeyring {
		how = "your passphrase, or the kernel keyring until the next reboot"
	}
	s.tty.Printf("Vault created in %s; it opens with %s.\n", s.dataDir, how)
	s.tty.Printf("Next: yett credential add --name NAME --host HOST, then yett serve.\n")
	return nil
}

// choosePassphrase asks twice, with echo off, until the two match and the
// first is long enough; it shows the app's advice about it.
func (s *setup) choosePassphrase(ctx context.Context) ([]byte, error) {
	s.tty.Printf("Choose the vault passphrase. It is the only way in: Yett cannot recover it.\n")
	for tries := 0; tries < 3; tries++ {
		p, err := s.tty.Secret(ctx, "New passphrase: ")
		if err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		a := vault.AssessPassphrase(p)
		s.tty.Printf("%s: %s\n", strings.ToUpper(a.Level[:1])+a.Level[1:], a.Hint)
		if a.Level == "too short" {
			clear(p)
			continue
		}
		again, err := s.tty.Secret(ctx, "The same passphrase again: ")
		if err != nil {
			clear(p)
			return nil, fmt.Errorf("init: %w", err)
		}
		same := bytes.Equal(p, again)
		clear(again)
		if same {
			return p, nil
		}
		clear(p)
		s.tty.Printf("The two differ; start again.\n")
	}
	return nil, errors.New("init: no passphrase was chosen")
}
