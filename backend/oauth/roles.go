package oauth

import (
	"sync"
	"time"
)

// tokens is custody's role of lending access tokens (token.go, lend.go,
// transport.go): the live tokens in memory, the single-flight refresh per
// authorization (across goroutines, and across processes through the lock
// files), DPoP nonces, and the last confirmed use. Its state is guarded by
// Custody.mu.
type tokens struct {
	*Custody
	cache   map[string]*accessToken // live access tokens, dropped on lock and disable
	flights map[string]*flight
	nonces  map[string]string // DPoP nonces by origin
	usedAt  map[string]time.Time
}

// connector is custody's role of connecting accounts (connect.go,
// abandon.go): the flows a person started, from the provider's consent to
// the new row, and what becomes of the tokens of a connection that fails
// after the exchange. Its flows are guarded by Custody.mu.
type connector struct {
	*Custody
	flows map[string]*flow
}

// revoker is custody's role of revoking (revoke.go): the local disable,
// the durable queue of provider revocations and its retry loop, and the
// check afterwards.
type revoker struct {
	*Custody
	revMu  sync.Mutex // one revocation pass at a time
	retryC chan struct{}
}
