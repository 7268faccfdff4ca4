package keeper

import (
	"context"
	"errors"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/upstream"
)

// ErrNoCustody means OAuth custody is not running (its database did not
// open): no authorization can be connected.
var ErrNoCustody = errors.New("keeper: OAuth custody is not running")

// ConnectMCPServerOAuth starts the connection of a remote MCP server's
// OAuth authorization (upstream.ConnectOAuth), reaching the server and
// its authorization server through the dialer the gateway's actions use.
func (k *Keeper) ConnectMCPServerOAuth(ctx context.Context, req upstream.OAuthRequest) (upstream.OAuthFlow, error) {
	m := k.State().OAuth
	if m == nil {
		return upstream.OAuthFlow{}, ErrNoCustody
	}
	return upstream.ConnectOAuth(ctx, m, action.New(k.cfg.HTTP).GuardedDial, k.cfg.HTTP.TLSClientConfig, req)
}
