package gateway

import (
	"context"
	"sync"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/vault"
)

// epochSecret lends a secret to the executor only while the vault is still
// unlocked in the epoch the call was approved under, whatever holds the
// secret: a vault credential or an OAuth lease. A lock between the approval
// and the moment the request is built means nothing is sent.
type epochSecret struct {
	v     *vault.Vault
	epoch uint64
	src   action.SecretSource
}

func (e epochSecret) WithSecret(ctx context.Context, use func([]byte) error) error {
	if e.v.Epoch() != e.epoch || e.v.Status().State != vault.StateUnlocked {
		return action.ErrNoSecret
	}
	return e.src.WithSecret(ctx, use)
}

// onceSecret lends a vault secret for one request and wipes it after that
// one use (or on wipe if it was never used).
type onceSecret struct {
	mu sync.Mutex
	s  *vault.Secret
}

func (o *onceSecret) WithSecret(_ context.Context, use func([]byte) error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.s == nil {
		return action.ErrNoSecret
	}
	err := use(o.s.Bytes())
	o.s.Wipe()
	o.s = nil
	return err
}

func (o *onceSecret) wipe() {
	o.mu.Lock()
	if o.s != nil {
		o.s.Wipe()
		o.s = nil
	}
	o.mu.Unlock()
}

func actionInjection(in vault.Injection) action.Injection {
	return action.Injection{
		Format: action.InjectionFormat(in.Format), HeaderName: in.HeaderName,
		Template: in.Template, Username: in.Username,
	}
}
