package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// preSend are executor errors that provably happen before any byte is sent.
var preSend = []error{action.ErrInvalidRequest, action.ErrForbiddenHeader, action.ErrInsecureScheme, action.ErrForbiddenTarget, action.ErrNoSecret}

type httpAnswer struct {
	RequestID      string              `json:"request_id"`
	IdempotencyKey string              `json:"idempotency_key"`
	Status         int                 `json:"status"`
	StatusText     string              `json:"status_text"`
	Headers        map[string][]string `json:"headers,omitempty"`
	Body           string              `json:"body,omitempty"`
	BodyBase64     string              `json:"body_base64,omitempty"`
	Truncated      bool                `json:"truncated,omitempty"`
}

func resultClass(status int) audit.ResultClass {
	switch {
	case status >= 200 && status < 300:
		return audit.ResultSuccess
	case status >= 400 && status < 500:
		return audit.ResultClientError
	case status >= 500:
		return audit.ResultServerError
	}
	return audit.ResultSuccess // 1xx/3xx: the server answered; the agent reads the status
}

// finish records the outcome (step 11) and builds the answer.
func (g *Gateway) finish(ctx context.Context, c *conn, sess approval.Session, act *audit.Action, id, key string, start time.Time, resp *action.Response, err error) *mcp.CallToolResult {
	bg := context.WithoutCancel(ctx)
	dur := time.Since(start).Milliseconds()
	if err != nil {
		for _, e := range preSend {
			if errors.Is(err, e) {
				g.journal.NotSent(bg, id, string(audit.ReasonRefusedBeforeSend))
				return g.refuse(c, act, sess.ID, &refusal{agentapi.CodeRefused, audit.ReasonRefusedBeforeSend, refusalText(e) + "; nothing was sent"})
			}
		}
		var w *action.WithheldError
		if errors.As(err, &w) {
			return g.withheld(bg, sess, act, id, key, dur, w)
		}
		g.journal.Finish(bg, id, journal.Result{Class: string(audit.ResultTransport)})
		g.audit.Append(bg, audit.Event{
			Type: audit.EventActionResult, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
			SessionID: sess.ID, Action: act, Result: &audit.Result{Class: audit.ResultTransport, DurationMS: dur},
		})
		what := "the request failed on the network"
		if errors.Is(err, action.ErrTimeout) {
			what = "the request timed out"
		}
		return toolError(agentapi.CodeStatusUnknown, "%s after it was sent; it may or may not have reached the server. Inspect the target before retrying with idempotency_key %s", what, key)
	}
	sum := sha256.Sum256(resp.Body)
	class := resultClass(resp.Status)
	// The journal and the audit log record the outcome at the same time:
	// neither depends on the other, and each is one fsync on the path back
	// to the agent.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := g.journal.Finish(bg, id, journal.Result{
			Status: resp.Status, Class: string(class), ResponseBytes: int64(len(resp.Body)),
			ResponseSHA256: hex.EncodeToString(sum[:]), Truncated: resp.Truncated,
		}); err != nil {
			g.log.Error("journal refused a result", "request", id)
		}
	}()
	defer wg.Wait()
	if _, err := g.audit.Append(bg, audit.Event{
		Type: audit.EventActionResult, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
		SessionID: sess.ID, Action: act,
		Result: &audit.Result{Class: class, Status: resp.Status, Bytes: int64(len(resp.Body)), DurationMS: dur},
	}); err != nil {
		g.log.Error("audit log refused a result", "request", id)
	}
	ans := httpAnswer{RequestID: id, IdempotencyKey: key, Status: resp.Status, StatusText: resp.StatusText,
		Headers: resp.Header, Truncated: resp.Truncated}
	if utf8.Valid(resp.Body) {
		ans.Body = string(resp.Body)
	} else {
		ans.BodyBase64 = base64.StdEncoding.EncodeToString(resp.Body)
	}
	out, _ := json.Marshal(ans)
	res := toolText(string(out))
	res.IsError = resp.Status >= 400
	return res
}

// ClassWithheld is the journal's result class of a call whose answer the
// executor withheld: the server answered (the status is kept), Yett did not
// pass the body on.
const ClassWithheld = "response_withheld"

// withheld records an answer the executor withheld because it could carry
// the credential past the redactor. The request was sent and answered, so
// the journal holds a result (yett.status says COMPLETED with the status)
// and the audit log a result whose reason names why the body was withheld;
// never an unknown outcome, never retry-safe.
func (g *Gateway) withheld(ctx context.Context, sess approval.Session, act *audit.Action, id, key string, dur int64, w *action.WithheldError) *mcp.CallToolResult {
	reason, why := agentapi.RefusedEncoded, "with a content encoding Yett did not ask for"
	if w.Reason == action.WithheldPartial {
		reason, why = agentapi.RefusedPartial, "with part of a resource (206)"
	}
	if err := g.journal.Finish(ctx, id, journal.Result{Status: w.Status, Class: ClassWithheld}); err != nil {
		g.log.Error("journal refused a result", "request", id)
	}
	if _, err := g.audit.Append(ctx, audit.Event{
		Type: audit.EventActionResult, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: sess.VaultEpoch,
		SessionID: sess.ID, Action: act, Reason: audit.Reason(reason),
		Result: &audit.Result{Class: resultClass(w.Status), Status: w.Status, DurationMS: dur},
	}); err != nil {
		g.log.Error("audit log refused a result", "request", id)
	}
	return toolError(agentapi.CodeResponseRefused+" "+reason, "the request was sent and the server answered (status %d) %s; "+
		"Yett withheld the answer because it could carry the credential in a form Yett cannot redact. "+
		"The action completed: do not send it again with idempotency_key %s", w.Status, why, key)
}

func refusalText(e error) string {
	switch e {
	case action.ErrForbiddenHeader:
		return "a header the agent may not set"
	case action.ErrInsecureScheme:
		return "credentials travel only over HTTPS, except to loopback"
	case action.ErrForbiddenTarget:
		return "the target address is not allowed"
	case action.ErrNoSecret:
		return "the credential became unavailable (the vault was locked)"
	}
	return "the request is not valid"
}

// keyInUseAnswer answers a call whose idempotency key names an earlier call
// that left or is in flight: it is never sent again.
func keyInUseAnswer(g *Gateway, prev *journal.Entry) *mcp.CallToolResult {
	if prev == nil {
		return toolError(agentapi.CodeInvalid, "idempotency_key already used")
	}
	return toolError(fateLine(g, *prev), "this idempotency_key names an earlier call, which is not sent again. Use a new key for a new action")
}
