package gateway

import (
	"context"
	"sync"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/vault"
)

// lentSecret lends a credential's secret to the executor for one request,
// and only while the vault is still in the epoch the call was approved
// under. It wipes the secret after the one use (or on Close if never used).
type lentSecret struct {
	v     *vault.Vault
	epoch uint64
	mu    sync.Mutex
	s     *vault.Secret
}

func (l *lentSecret) WithSecret(_ context.Context, use func([]byte) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil || l.v.Epoch() != l.epoch || l.v.Status().State != vault.StateUnlocked {
		return action.ErrNoSecret
	}
	err := use(l.s.Bytes())
	l.s.Wipe()
	l.s = nil
	return err
}

func (l *lentSecret) wipe() {
	l.mu.Lock()
	if l.s != nil {
		l.s.Wipe()
		l.s = nil
	}
	l.mu.Unlock()
}

func actionInjection(in vault.Injection) action.Injection {
	return action.Injection{
		Format: action.InjectionFormat(in.Format), HeaderName: in.HeaderName,
		Template: in.Template, Username: in.Username,
	}
}
