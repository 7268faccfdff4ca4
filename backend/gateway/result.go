package gateway

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/agentapi"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// preSend are executor errors that provably happen before any byte is sent.
var preSend = []error{action.ErrInvalidRequest, action.ErrForbiddenHeader, action.ErrInsecureScheme, action.ErrForbiddenTarget, action.ErrNoSecret}

// httpAnswer is what the agent reads of a request that was answered.
type httpAnswer struct {
	outcome
	Status     int                 `json:"status"`
	StatusText string              `json:"status_text"`
	Headers    map[string][]string `json:"headers,omitempty"`
	Body       string              `json:"body,omitempty"`
	BodyBase64 string              `json:"body_base64,omitempty"`
	Truncated  bool                `json:"truncated,omitempty"`
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

// finish records the outcome of a sent request (step 10) and builds the
// answer.
func (d *dispatchedCall) finish(start time.Time, resp *action.Response, err error) *mcp.CallToolResult {
	dur := time.Since(start).Milliseconds()
	if err != nil {
		for _, e := range preSend {
			if errors.Is(err, e) {
				return d.notSent(&refusal{agentapi.CodeRefused, audit.ReasonRefusedBeforeSend, refusalText(e) + "; nothing was sent"})
			}
		}
		var w *action.WithheldError
		if errors.As(err, &w) {
			return d.withheld(dur, w)
		}
		d.outcome(journal.Result{Class: string(audit.ResultTransport)}, audit.Result{Class: audit.ResultTransport, DurationMS: dur}, "", nil)
		what := "the request failed on the network"
		if errors.Is(err, action.ErrTimeout) {
			what = "the request timed out"
		}
		return d.said(agentapi.CodeStatusUnknown).refused(fmt.Sprintf("%s after it was sent; it may or may not have reached the server. "+
			"Inspect the target before retrying with idempotency_key %s", what, d.key))
	}
	sum := sha256.Sum256(resp.Body)
	class := resultClass(resp.Status)
	d.outcome(journal.Result{
		Status: resp.Status, Class: string(class), ResponseBytes: int64(len(resp.Body)),
		ResponseSHA256: hex.EncodeToString(sum[:]), Truncated: resp.Truncated,
	}, audit.Result{Class: class, Status: resp.Status, Bytes: int64(len(resp.Body)), DurationMS: dur}, "", nil)
	ans := httpAnswer{outcome: d.said(fmt.Sprintf("%s status=%d", agentapi.CodeCompleted, resp.Status)),
		Status: resp.Status, StatusText: resp.StatusText, Headers: resp.Header, Truncated: resp.Truncated}
	if utf8.Valid(resp.Body) {
		ans.Body = string(resp.Body)
	} else {
		ans.BodyBase64 = base64.StdEncoding.EncodeToString(resp.Body)
	}
	return toolAnswer("", ans, resp.Status >= 400)
}

// cutByLock records a call whose connection Yett cut because the vault
// locked while it was in flight. Bytes may have left: the outcome is
// unknown, and the agent is told so.
func (d *dispatchedCall) cutByLock(start time.Time) *mcp.CallToolResult {
	d.outcome(journal.Result{Class: string(audit.ResultUnknown)},
		audit.Result{Class: audit.ResultUnknown, DurationMS: time.Since(start).Milliseconds()}, audit.ReasonCutByLock, nil)
	return d.said(agentapi.CodeStatusUnknown).refused("the vault was locked while this request was in flight, and Yett cut its connection; " +
		"it may or may not have reached the server. Inspect the target before retrying with idempotency_key " + d.key)
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
func (d *dispatchedCall) withheld(dur int64, w *action.WithheldError) *mcp.CallToolResult {
	reason, why := agentapi.RefusedEncoded, "with a content encoding Yett did not ask for"
	if w.Reason == action.WithheldPartial {
		reason, why = agentapi.RefusedPartial, "with part of a resource (206)"
	}
	d.outcome(journal.Result{Status: w.Status, Class: ClassWithheld},
		audit.Result{Class: resultClass(w.Status), Status: w.Status, DurationMS: dur}, audit.Reason(reason), nil)
	return d.said(agentapi.CodeResponseRefused + " " + reason).refused(fmt.Sprintf("the request was sent and the server answered (status %d) %s; "+
		"Yett withheld the answer because it could carry the credential in a form Yett cannot redact. "+
		"The action completed: do not send it again with idempotency_key %s", w.Status, why, d.key))
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
// The answer names the earlier call (its request id) and the audit entry
// of this refusal.
func keyInUseAnswer(g *Gateway, act *audit.Action, entry int64, prev *journal.Entry) *mcp.CallToolResult {
	if prev == nil {
		return outcomeOf(agentapi.CodeInvalid).at("", act.IdempotencyRef, entry).refused("idempotency_key already used")
	}
	return outcomeOf(fateLine(g, *prev)).at(prev.ID, act.IdempotencyRef, entry).refused(
		"this idempotency_key names an earlier call, which is not sent again. Use a new key for a new action")
}
