//go:build unix

package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"filippo.io/age"
	"golang.org/x/term"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
)

func init() {
	commands["serve"] = command{
		summary: "run the gateway without a window; unlock and approve at this terminal",
		run:     runServe,
	}
}

const serveUsage = `usage: yett serve [--approval-timeout 120s]

Runs the same gateway as the desktop app, without a window, for servers and
SSH sessions. The vault passphrase is read from the controlling terminal with
echo off, and approval cards are shown and answered there (/dev/tty), never on
stdin: a program that starts yett serve with pipes cannot answer its own
approvals. An agent in the same terminal session as yett serve is refused at
the terminal (approve it from another session or from the app).

At the terminal:  y N / n N   approve or deny card N
                  sessions     list approved sessions
                  revoke N     end session N
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
	t := &terminal{tty: tty, v: v}
	if err := t.unlock(); err != nil {
		return err
	}
	rs, err := v.AuditRecipient()
	if err != nil {
		return fmt.Errorf("serve: the vault has no audit key: %w", err)
	}
	recipient, err := age.ParseX25519Recipient(rs)
	if err != nil {
		return errors.New("serve: the vault's audit key is not a valid age recipient")
	}
	// yett serve and yett mcp are one binary: only a peer running this very
	// executable is a genuine shim.
	self, err := selfSHA256()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, nil))
	// The log takes one writer (its file is locked), and both the gateway and
	// the OAuth manager record into it, so serve opens it and owns it.
	auditLog, _, err := audit.Open(audit.Options{Dir: filepath.Join(dataDir, gateway.AuditDir), Recipient: recipient})
	if errors.Is(err, audit.ErrLocked) {
		return errors.New("serve: the audit log is in use: the Yett app or another yett serve is running for this user")
	}
	if err != nil {
		return fmt.Errorf("serve: opening the audit log: %w", err)
	}
	defer auditLog.Close() // signs a final checkpoint
	// Connections are made only in the app, by a person; serve serves the
	// operations that exist and revokes what a person revoked there.
	var boot atomic.Value
	om, err := oauth.Open(oauth.Config{
		DataDir: dataDir, Vault: v, Audit: auditLog, Logger: logger,
		BootID: func() string { s, _ := boot.Load().(string); return s },
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer om.Close() // after the gateway, which uses it
	ops, err := operation.Open(operation.Config{DataDir: dataDir, Authorizations: om})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer ops.Close() // after the gateway, which uses it
	gw, err := gateway.New(gateway.Config{
		Vault: v, DataDir: dataDir, RuntimeDir: runDir, Audit: auditLog, ApprovalTimeout: *timeout,
		ShimSHA256: [][32]byte{self},
		Logger:     logger,
		Operations: ops,
		OAuth:      om,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	boot.Store(gw.BootID())
	defer recordVaultChanges(v, auditLog, gw.BootID(), logger)()
	t.b = gw.Broker()
	served := make(chan error, 1)
	go func() { served <- gw.Serve(ctx) }()
	unsub := t.b.Subscribe(func(approval.Update) { t.refresh() })
	defer unsub()
	fmt.Fprintf(tty, "yett serve: gateway listening on %s\nApprovals are answered here. Type help for commands.\n", gw.SocketPath())
	quit := make(chan struct{})
	go t.commands(quit)
	select {
	case <-ctx.Done():
	case <-quit:
	case err := <-served:
		if err != nil {
			gw.Close()
			return err
		}
	}
	gw.Close()
	fmt.Fprintln(tty, "yett serve: stopped")
	return nil
}

// recordVaultChanges records vault lock and unlock in serve's audit log,
// with a checkpoint at every lock. The gateway records them only into a log
// it opened itself; serve hands it one, as the desktop app does, and so
// records them here, each once.
func recordVaultChanges(v *vault.Vault, log *audit.Log, bootID string, logger *slog.Logger) (cancel func()) {
	return v.Subscribe(func(ev vault.Event) {
		e := audit.Event{Time: time.Now().UTC(), BootID: bootID, VaultEpoch: ev.Epoch}
		switch ev.Kind {
		case vault.EventLocked:
			e.Type, e.Reason = audit.EventVaultLocked, audit.Reason(clipReason(ev.Reason))
		case vault.EventUnlocked:
			e.Type = audit.EventVaultUnlocked
		default:
			return
		}
		if _, err := log.Append(context.Background(), e); err != nil {
			logger.Error("the audit log refused a vault event", "type", string(e.Type), "err", err)
			return
		}
		if ev.Kind == vault.EventLocked {
			if _, err := log.Checkpoint(); err != nil {
				logger.Error("audit checkpoint at lock", "err", err)
			}
		}
	})
}

// clipReason bounds a lock reason as the gateway does.
func clipReason(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// selfSHA256 hashes the executable this process runs.
func selfSHA256() ([32]byte, error) {
	path, err := os.Executable()
	if err != nil {
		return [32]byte{}, errors.New("cannot find its own executable")
	}
	f, err := os.Open(path)
	if err != nil {
		return [32]byte{}, errors.New("cannot read its own executable")
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, errors.New("cannot read its own executable")
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// readPassphrase reads one line from the terminal with echo off.
func readPassphrase(tty *os.File, prompt string) (vault.Passphrase, error) {
	fmt.Fprint(tty, prompt)
	p, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, errors.New("serve: could not read the passphrase from the terminal")
	}
	return vault.Passphrase(p), nil
}
