package keeper

import (
	"context"
	"errors"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/upstream"
	"github.com/yettdev/yett/backend/vault"
)

// startLocked runs OAuth custody, the catalogue and the gateway on the open
// audit log; each records into it, so none runs without it. OAuth custody
// does not need a running gateway: if the gateway cannot start (another
// Yett serves this user), accounts are still connected and revoked here.
// k.mu held.
func (k *Keeper) startLocked() {
	if k.audit == nil || k.closed {
		return
	}
	if k.oauth == nil {
		m, err := oauth.Open(oauth.Config{
			DataDir: k.cfg.DataDir, Vault: k.vault, Audit: k.audit, Logger: k.log,
			BootID: k.BootID, OpenBrowser: k.cfg.OpenBrowser, Surface: k.cfg.Origin,
		})
		if err != nil {
			k.log.Error("OAuth connections unavailable", "err", err)
		} else if ops, err := operation.Open(operation.Config{DataDir: k.cfg.DataDir, Authorizations: m}); err != nil {
			k.log.Error("OAuth connections unavailable: the operation catalogue does not open", "err", err)
			m.Close()
		} else {
			k.oauth, k.ops = m, ops
			k.openInventoryLocked()
			// The subscription ends with the catalogue: a closed one
			// announces nothing.
			ops.SubscribeChanges(k.recordOperationChange)
		}
	}
	if k.gw != nil || k.cfg.NoGateway {
		return
	}
	cfg := gateway.Config{
		Vault: k.vault, DataDir: k.cfg.DataDir, RuntimeDir: k.cfg.RuntimeDir, Audit: k.audit, BootID: k.BootID(),
		ApprovalTimeout: k.cfg.ApprovalTimeout, HTTP: k.cfg.HTTP, Logger: k.log, ShimSHA256: k.shim,
	}
	if k.oauth != nil {
		cfg.Operations, cfg.OAuth = k.ops, k.oauth
	}
	if k.inventory.inv != nil {
		cfg.Control = k.inventory.inv
	}
	if k.ssh != nil {
		cfg.Recordings = k.ssh
	}
	// The upstream MCP servers run only where the gateway runs: the one
	// Yett that serves this user's agents starts them.
	upCfg := upstream.Config{
		Vault: k.vault, Dial: action.New(k.cfg.HTTP).GuardedDial, Logger: k.log,
		TLSClientConfig: k.cfg.HTTP.TLSClientConfig,
	}
	if k.oauth != nil {
		upCfg.Authorizations = upstream.Custody(k.oauth)
	}
	up := upstream.New(upCfg)
	cfg.Upstreams = up
	gw, err := gateway.New(cfg)
	if err != nil {
		up.Close()
		if errors.Is(err, gateway.ErrAlreadyRunning) {
			k.gwProblem = "Another Yett (the app or yett serve) already serves agents for this user."
			k.log.Warn("agent gateway not started: another Yett gateway (the app or yett serve) serves this user")
		} else {
			k.gwProblem = "The agent gateway could not start."
			k.log.Error("agent gateway not started", "err", err)
		}
		return
	}
	k.gwProblem = ""
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := gw.Serve(ctx); err != nil && ctx.Err() == nil {
			k.log.Error("agent gateway stopped", "err", err)
		}
	}()
	k.gw, k.gwCancel, k.gwDone = gw, cancel, done
	k.upstream = up
	up.Subscribe(func() { k.upstreamChanges.Publish(struct{}{}) })
	up.Start()
	k.gatewayStartedLocked(gw)
	k.notes.startRelayLocked(gw.Broker())
	k.logGatewayReadyLocked()
}

// logGatewayReadyLocked logs "agent gateway listening" once the gateway
// can act, that is once it runs and the vault is unlocked; before that it
// logs that calls are refused. A script that waits for the line to type a
// passphrase at `yett serve` would otherwise type before the prompt: the
// gateway starts, locked, before the passphrase is asked. k.mu held.
func (k *Keeper) logGatewayReadyLocked() {
	if k.gw == nil {
		return
	}
	if k.vault.Status().State != vault.StateUnlocked {
		k.log.Info("agent gateway started; every call is refused until the vault is unlocked", "socket", k.gw.SocketPath())
		return
	}
	k.log.Info("agent gateway listening", "socket", k.gw.SocketPath())
}

// stopLocked stops the gateway, then the catalogue and OAuth custody it
// served. k.mu held.
func (k *Keeper) stopLocked() {
	k.stopTeamLocked(nil)
	k.closeInventoryLocked()
	k.notes.stopRelayLocked()
	if k.gw != nil {
		k.gwCancel()
		if err := k.gw.Close(); err != nil {
			k.log.Warn("close agent gateway", "err", err)
		}
		<-k.gwDone
		k.gw, k.gwCancel, k.gwDone = nil, nil, nil
	}
	if k.upstream != nil {
		k.upstream.Close()
		k.upstream = nil
	}
	if k.ops != nil {
		if err := k.ops.Close(); err != nil {
			k.log.Warn("close operation catalogue", "err", err)
		}
		k.ops = nil
	}
	if k.oauth != nil {
		if err := k.oauth.Close(); err != nil {
			k.log.Warn("close OAuth manager", "err", err)
		}
		k.oauth = nil
	}
}
