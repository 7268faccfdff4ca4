package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
)

// gatewayRunner runs the agent gateway and the OAuth manager inside the
// desktop app. Both write into the app's audit log (never a log of their
// own), so they can only run while that log is open: from start-up when the
// vault exists, from the first Create otherwise. A vault reset sets the old
// log aside, so they stop with it and start again on the next Create.
type gatewayRunner struct {
	mu     sync.Mutex
	gw     *gateway.Gateway
	writer *audit.Log // the log gw writes to
	cancel context.CancelFunc
	done   chan struct{}

	oauth    *oauth.Manager       // served by gw; closed after it
	ops      *operation.Catalogue // the operations oauth lends for; closed with it
	oauthLog *audit.Log           // the log oauth writes to
}

// watchGateway starts the gateway now if it can, and follows the vault's
// lifecycle from then on.
func (a *App) watchGateway() {
	a.gateway.cancelSub = a.vault.Subscribe(func(e vault.Event) {
		switch e.Kind {
		case vault.EventCreated, vault.EventUnlocked:
			// Not from inside the vault's delivery: gateway.New subscribes
			// to the vault itself.
			go a.ensureGateway()
		case vault.EventReset:
			go a.stopGateway()
		}
	})
	a.ensureGateway()
}

// ensureGateway starts the OAuth manager and the gateway unless they
// already run on the current audit log.
func (a *App) ensureGateway() {
	r := &a.gateway.runner
	r.mu.Lock()
	defer r.mu.Unlock()
	w := a.Audit.writer()
	if r.gw != nil && r.writer == w {
		return
	}
	a.stopGatewayLocked()
	// The manager does not need a running gateway: if the gateway cannot
	// start, accounts are still connected, inventoried and revoked here.
	a.runOAuthLocked(w)
	if w == nil {
		a.cfg.Log.Info("agent gateway not started: the audit log is not open (vault not set up, or the log is refused)")
		return
	}
	cfg := gateway.Config{
		Vault:      a.vault,
		DataDir:    a.cfg.DataDir,
		RuntimeDir: a.cfg.RuntimeDir,
		Audit:      w,
		Logger:     a.cfg.Log,
		ShimSHA256: a.shimHashes(),
	}
	if r.oauth != nil {
		cfg.Operations, cfg.OAuth = r.ops, r.oauth
	}
	gw, err := gateway.New(cfg)
	if err != nil {
		if errors.Is(err, gateway.ErrAlreadyRunning) {
			a.cfg.Log.Warn("agent gateway not started: another Yett gateway (yett serve?) serves this user")
		} else {
			a.cfg.Log.Error("agent gateway not started", "err", err)
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gw.Serve(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Log.Error("agent gateway stopped", "err", err)
		}
	}()
	r.gw, r.writer, r.cancel, r.done = gw, w, cancel, done
	a.gateway.boot.Store(gw.BootID())
	a.Approvals.attach(gw.Broker())
	a.cfg.Log.Info("agent gateway listening", "socket", gw.SocketPath())
}

// shimHashes pins the `yett mcp` shim the gateway accepts: the yett CLI
// installed next to the desktop binary (Config.CLIPath). Pinned, a program
// that dials the socket itself is refused instead of passing its parent off
// as the agent on the card. Without a CLI beside the app any program of the
// user's may connect (the card still names what connected) and the log says
// so.
func (a *App) shimHashes() [][32]byte {
	path := a.cfg.CLIPath
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		a.cfg.Log.Warn("no yett CLI next to the app: the gateway accepts any program of this user on its socket", "looked_for", path)
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		a.cfg.Log.Warn("cannot read the yett CLI to pin it", "path", path, "err", err)
		return nil
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return [][32]byte{sum}
}

// stopGateway stops the gateway and then the OAuth manager it served.
func (a *App) stopGateway() {
	r := &a.gateway.runner
	r.mu.Lock()
	defer r.mu.Unlock()
	a.stopGatewayLocked()
	a.closeOAuthLocked()
}

// stopGatewayLocked detaches the cards first, so the UI never answers a
// broker that is going away. r.mu held.
func (a *App) stopGatewayLocked() {
	r := &a.gateway.runner
	if r.gw == nil {
		return
	}
	a.Approvals.attach(nil)
	r.cancel()
	if err := r.gw.Close(); err != nil {
		a.cfg.Log.Warn("close agent gateway", "err", err)
	}
	<-r.done
	a.gateway.boot.Store("")
	r.gw, r.writer, r.cancel, r.done = nil, nil, nil, nil
}

// gatewayState is the App's part that runs the gateway.
type gatewayState struct {
	runner    gatewayRunner
	cancelSub func()
	boot      atomic.Value // string: the running gateway's boot id, "" when none
}

// bootID names the running gateway in the OAuth manager's audit events. It
// is read without r.mu: the manager records while the runner may hold it.
func (g *gatewayState) bootID() string {
	s, _ := g.boot.Load().(string)
	return s
}

func (a *App) closeGateway() {
	if a.gateway.cancelSub != nil {
		a.gateway.cancelSub()
	}
	a.stopGateway()
}
