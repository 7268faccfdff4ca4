package keeper

import "github.com/yettdev/yett/backend/upstream"

// Upstreams is the manager of the upstream MCP servers, while the gateway
// runs here (nil otherwise: another Yett serves this user's agents, and
// starts the servers).
func (k *Keeper) Upstreams() *upstream.Manager {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.upstream
}

// SubscribeUpstreams calls fn whenever a server's state or tools changed,
// across restarts of the gateway.
func (k *Keeper) SubscribeUpstreams(fn func()) (cancel func()) {
	return k.upstreamChanges.Subscribe(func(struct{}) { fn() })
}
