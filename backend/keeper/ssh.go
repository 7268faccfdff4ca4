package keeper

import (
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/sshhosts"
)

// openSSHLocked makes the hosts service (backend/sshhosts) both front ends
// use: its pins are recorded in this keeper's log, and the gateway keeps
// session recordings through it. k.mu held.
func (k *Keeper) openSSHLocked() {
	m, err := sshhosts.New(sshhosts.Config{Vault: k.vault, DataDir: k.cfg.DataDir, Logger: k.log,
		KnownHosts: k.cfg.KnownHosts, Record: k.recordSSH})
	if err != nil {
		k.log.Error("SSH hosts unavailable", "err", err)
		return
	}
	k.ssh = m
}

// recordSSH writes a host key pin into the log. The hosts service calls it
// from a front end's goroutine, never under k.mu.
func (k *Keeper) recordSSH(e audit.Event) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recordLocked(e)
}

// SSHHosts is the hosts service (add, pin, edit, remove hosts, read
// session recordings); nil if it could not start (the log says why).
func (k *Keeper) SSHHosts() *sshhosts.Registry { return k.ssh }
