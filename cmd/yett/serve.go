//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["serve"] = command{
		usage:   serveUsage,
		summary: "run the gateway without a window; unlock and approve at this terminal",
		run:     runServe,
	}
}

const serveUsage = `usage: yett serve [--approval-timeout 120s]

Runs the same gateway as the desktop app, without a window, for servers and
SSH sessions. The vault passphrase is read from the controlling terminal with
echo off, and approval cards are shown and answered there (/dev/tty), never on
stdin: a program that starts yett serve with pipes cannot answer its own
approvals. Each card carries a one-time code that an approval must type: a
program that can push keystrokes into this terminal does not see the screen.
An agent in the same terminal session as yett serve, or one started by a
process of that session, is refused at the terminal (approve it from
another session or from the app).

At the terminal:  y N CODE     approve card N with the one-time code on it
                  g N CODE     approve call card N and calls like it for 10
                               minutes (the card says which)
                  n N          deny card N
                  sessions     list approved sessions and their grants
                  revoke N     end session N
                  revoke gN    end grant N
                  lock         lock the vault (denies every call)
                  unlock       unlock it again
                  quit         stop the gateway
`

// ttyPath is the controlling terminal; a constant, so no flag or
// environment variable can point the prompts elsewhere.
const ttyPath = "/dev/tty"

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, serveUsage) }
	timeout := fs.Duration("approval-timeout", approval.DefaultTimeout, "how long an approval card waits")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	if fs.NArg() != 0 || *timeout <= 0 || *timeout > 10*time.Minute {
		fs.Usage()
		return withExitCode(2, errors.New("serve: bad arguments"))
	}
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return withExitCode(2, errors.New("serve: needs a controlling terminal to unlock the vault and answer approvals (run it in a terminal, tmux or screen; the desktop app is the other way)"))
	}
	defer tty.Close()
	dataDir, err := userdir.DataDir(env.Getenv)
	if err != nil {
		return err
	}
	runDir, err := userdir.RuntimeDir(env.Getenv)
	if err != nil {
		return err
	}
	if err := userdir.Ensure(dataDir); err != nil {
		return err
	}
	v, err := vault.Open(dataDir, vault.Options{})
	if err != nil {
		return fmt.Errorf("serve: opening the vault: %w", err)
	}
	defer v.Close()
	switch v.Status().State {
	case vault.StateUninitialised:
		return errors.New("serve: no vault yet; set one up in the Yett app first")
	case vault.StateDamaged:
		return fmt.Errorf("serve: the vault is damaged (%s); open the Yett app to deal with it", v.Status().Damaged)
	}
	// yett serve and yett mcp are one binary: only a peer running this very
	// executable is a genuine shim.
	self, err := os.Executable()
	if err != nil {
		return errors.New("serve: cannot find its own executable to pin the shim")
	}
	// The one composition root, as in the app: it opens the audit log, runs
	// OAuth custody and the gateway, and records the vault's lock and unlock
	// from here on, the unlock below included. Connections are made only in
	// the app, by a person; serve serves the operations that exist.
	k, err := keeper.Open(keeper.Config{
		DataDir: dataDir, RuntimeDir: runDir, Vault: v, Logger: slog.New(slog.NewTextHandler(env.Stderr, nil)),
		ShimPath: self, ApprovalTimeout: *timeout,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer k.Close() // locks the vault (recorded), stops the gateway, closes the log
	st := k.State()
	switch {
	case !st.AuditWriting:
		return fmt.Errorf("serve: %s", strings.TrimSuffix(orText(st.AuditProblem, "The audit log is not being written."), "."))
	case st.Broker == nil:
		return fmt.Errorf("serve: %s", strings.TrimSuffix(orText(st.GatewayProblem, "The agent gateway did not start."), "."))
	}
	t := &terminal{tty: tty, v: v, b: st.Broker, ttyName: controllingTerminal()}
	defer followInventory(k, tty)()
	if err := t.unlock(); err != nil {
		return err
	}
	unsub := t.b.Subscribe(func(approval.Update) { t.refresh() })
	defer unsub()
	fmt.Fprintf(tty, "yett serve: gateway listening on %s\nApprovals are answered here, each with the one-time code on its card. Type help for commands.\n", st.SocketPath)
	if tiocstiAllowed() {
		fmt.Fprint(tty, "Note: this kernel lets any program in this terminal's session type into it (TIOCSTI; dev.tty.legacy_tiocsti is 1). "+
			"Typed input alone cannot approve a card (it needs the card's code, which only this screen shows), and cards from agents in this session are refused; "+
			"set dev.tty.legacy_tiocsti=0 to close it.\n")
	}
	quit := make(chan struct{})
	go t.commands(quit)
	select {
	case <-ctx.Done():
	case <-quit:
	}
	fmt.Fprintln(tty, "yett serve: stopped")
	return nil
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// readPassphrase reads one line from the terminal with echo off
// (readSecretAt: off before the prompt shows).
func readPassphrase(tty *os.File, text string) (vault.Passphrase, error) {
	p, err := readSecretAt(tty, text)
	if err != nil {
		return nil, errors.New("serve: could not read the passphrase from the terminal")
	}
	return vault.Passphrase(p), nil
}
