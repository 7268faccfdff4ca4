package vault

import "time"

var timeZero time.Time

// Touch records activity by the person and restarts the idle auto-lock
// timer. Agents' requests must not call it: only a person keeps the vault
// open.
func (v *Vault) Touch() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state == StateUnlocked && !v.closed {
		v.idle().restartIdleTimer()
	}
}

// restartIdleTimer arms the timer for v.autoLock from now; v.mu held. Each
// arming gets a generation number so a timer that fires after being
// replaced (Stop lost the race) does nothing.
func (v *idleTimer) restartIdleTimer() {
	v.stopIdleTimer()
	v.timerGen++
	gen := v.timerGen
	v.deadline = v.opts.Now().Add(v.autoLock)
	v.stopTimer = v.opts.AfterFunc(v.autoLock, func() { v.idleFired(gen) })
}

func (v *idleTimer) stopIdleTimer() {
	if v.stopTimer != nil {
		v.stopTimer()
		v.stopTimer = nil
	}
}

func (v *idleTimer) idleFired(gen uint64) {
	v.mu.Lock()
	if gen != v.timerGen || v.state != StateUnlocked || v.closed {
		v.mu.Unlock()
		return
	}
	v.stopTimer = nil
	v.session().lockLocked("idle")
	v.mu.Unlock()
	v.session().deliver()
}
