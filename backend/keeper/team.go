package keeper

import (
	"errors"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/version"
)

// teamPart is the keeper's part that shares this machine's inventory,
// drills and checkpoints with its team (backend/team) and answers the
// lead's revocation requests. It runs in the Yett that serves agents (the
// app or yett serve, not the setup commands), while the vault is unlocked
// and holds a team membership: the syncer's credentials and signing key
// come out of the vault at the unlock and are wiped at the lock. What it
// shares while the database is unreachable waits in its outbox.
type teamPart struct {
	syncer   *team.Syncer // k.mu
	unsubCPs func()
	// witnessing submits the checkpoints to the team's witness, nil
	// while the membership names none.
	witnessing *witnessing
}

// startTeamLocked starts the syncer if this vault belongs to a team.
// k.mu held, the inventory open.
func (k *Keeper) startTeamLocked() {
	if k.team.syncer != nil || k.cfg.NoGateway || k.inventory.inv == nil || k.closed {
		return
	}
	creds, err := team.Load(k.vault.Team())
	if errors.Is(err, vault.ErrNoTeam) || errors.Is(err, vault.ErrLocked) {
		return
	}
	if err != nil {
		k.log.Error("the team membership in the vault does not read; not sharing with the team", "err", err)
		return
	}
	cfg := team.Config{
		DataDir: k.cfg.DataDir, Inventory: k.inventory.inv, Logger: k.log, Version: version.String(),
		Ready: func() bool { return k.vault.Status().State == vault.StateUnlocked },
	}
	if k.oauth != nil {
		cfg.Revoker = k.oauth
	}
	s, err := team.Start(cfg, creds)
	if err != nil {
		creds.Wipe()
		k.log.Error("the team syncer did not start", "err", err)
		return
	}
	k.team.syncer = s
	if k.audit != nil {
		k.team.unsubCPs = k.audit.SubscribeCheckpoints(s.PublishCheckpoint)
	}
	k.startWitnessingLocked(creds.Witness, s)
}

// stopTeamLocked stops the syncer (what it has not sent waits in its
// outbox for the next unlock). At a lock, the checkpoint the lock made is
// queued first (cp, nil otherwise). k.mu held.
func (k *Keeper) stopTeamLocked(cp *audit.Checkpoint) {
	s := k.team.syncer
	if s == nil {
		return
	}
	if cp != nil {
		s.PublishCheckpoint(*cp)
	}
	// Before the syncer closes: the lock's cosignature goes out with it.
	k.stopWitnessingLocked(cp != nil)
	if k.team.unsubCPs != nil {
		k.team.unsubCPs()
		k.team.unsubCPs = nil
	}
	if err := s.Close(); err != nil {
		k.log.Warn("close the team syncer", "err", err)
	}
	k.team.syncer = nil
}

// teamChangedLocked follows a change of the membership (joined, left): the
// syncer restarts with the new one. k.mu held.
func (k *Keeper) teamChangedLocked(c vault.Change) {
	if c != vault.ChangeTeamJoined && c != vault.ChangeTeamUpdated && c != vault.ChangeTeamLeft {
		return
	}
	k.stopTeamLocked(nil)
	k.startTeamLocked()
}

// Team is the team syncer, nil while this machine shares nothing (no team,
// a locked vault, or a process that serves no agents).
func (k *Keeper) Team() *team.Syncer {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.team.syncer
}
