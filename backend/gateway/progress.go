package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/approval"
)

// DefaultProgressEvery is how often a call waiting on a card tells its
// client so: within the 10 s a client's idle watchdog allows.
const DefaultProgressEvery = 5 * time.Second

type callKey struct{}

// withCall carries the call being answered in ctx, for whatever waits on
// its behalf (waitingNotice).
func withCall(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	return context.WithValue(ctx, callKey{}, req)
}

// waitingNotice tells the client of the call in ctx, while a card about it
// waits for the person, that it waits and how long it may still wait:
// notifications/progress at once and every ProgressEvery, for a call that
// carried a progress token (a client that asked for none gets none). A
// client resets its own timeout on them (Claude Code does; the TypeScript
// SDK does with resetTimeoutOnProgress). The returned stop ends them; it
// must be called before the call is answered.
func (g *Gateway) waitingNotice(ctx context.Context, what string, deadline time.Time) (stop func()) {
	req, _ := ctx.Value(callKey{}).(*mcp.CallToolRequest)
	if req == nil || req.Session == nil || req.Params == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	every := g.cfg.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		start := time.Now()
		total := time.Until(deadline).Seconds()
		for {
			left := max(0, int(time.Until(deadline).Round(time.Second).Seconds()))
			// Progress must increase: the seconds waited so far.
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: time.Since(start).Seconds(), Total: total,
				Message: fmt.Sprintf("waiting for approval in Yett: %s, %d s left", what, left),
			})
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// waitingWhat names a session card in a waiting notice.
func waitingWhat(why approval.Continuity) string {
	if why.Change == approval.ChangeFirst {
		return "new agent"
	}
	return string(why.Change)
}

// askCall asks the person about one call (a per-call card), telling the
// client meanwhile that it waits and until when the card does.
func (g *Gateway) askCall(ctx context.Context, sess approval.Session, card approval.Call) (approval.Via, error) {
	t, err := g.broker.RequestCall(sess.Run, sess.ID, card)
	if err != nil {
		return approval.Via{}, err
	}
	stop := g.waitingNotice(ctx, "this call", t.Deadline())
	defer stop()
	return t.Wait(ctx)
}

// joinOf names a call across retries for its per-call card
// (approval.Call.Join): its idempotency key and the digest the journal
// keeps of its request, so a retry that the journal would take for the
// very same call joins the card and another request under the key does
// not. A call without a key has no Join.
func joinOf(key, digest string) string {
	if key == "" {
		return ""
	}
	return key + ":" + digest
}
