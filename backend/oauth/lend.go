package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/yettdev/yett/backend/action"
)

// Binding describes the authorization behind an operation for the
// gateway's decision and its audit entries. It holds no secret.
type Binding struct {
	AuthorizationID string
	Name            string
	Provider        string // host of the token endpoint
	AccountRef      string
	Scopes          string
	Environment     string
}

// Check says whether authorization id may serve an operation now, from
// local state only: a disabled, revoked, suspended or needs-reconnection row
// is refused without any network call. (Whether a person answers for it is
// the owner inventory's to say.)
func (m *Custody) Check(id string) (Binding, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return Binding{}, notFound(err)
	}
	b := Binding{
		AuthorizationID: r.ID, Name: r.Name, Provider: hostOf(r.TokenEndpoint), AccountRef: r.AccountRef,
		Scopes: r.Scopes, Environment: r.Environment,
	}
	return b, usable(r)
}

// Lease is an access token lent for one request: the gateway passes it to
// the action executor as the credential's secret and calls Release after.
// It has no method that returns the token; it prints, marshals and logs as
// REDACTED.
type Lease struct {
	t     *accessToken
	value tokenValue
	m     *Custody
	id    string
}

func (Lease) String() string               { return redacted }
func (Lease) GoString() string             { return redacted }
func (Lease) Format(f fmt.State, _ rune)   { f.Write([]byte(redacted)) }
func (Lease) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (Lease) LogValue() slog.Value         { return slog.StringValue(redacted) }

// Acquire returns a lease on a fresh access token for authorization id,
// refreshing it first when it is missing or about to expire (once per
// authorization at a time, across goroutines and processes). op names the
// operation that needed it, for the audit log. Call it only for an action
// that was approved and recorded: this is the only path that refreshes.
func (m *Custody) Acquire(ctx context.Context, id, op string) (*Lease, error) {
	for {
		t, err := m.tokens.access(ctx, id, op)
		if err != nil {
			return nil, err
		}
		// The copy is taken under the lock that guards the cache: a lock,
		// a disable or Close wipes cached tokens in place, and a copy
		// taken meanwhile would be torn (or all zeroes). A token wiped
		// between access and here was dropped: look again, and access
		// says why it cannot serve, or refreshes.
		m.mu.Lock()
		value := append([]byte(nil), t.value.b...)
		m.mu.Unlock()
		if len(value) > 0 {
			return &Lease{t: t, value: tokenValue{b: value}, m: m, id: id}, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// Credential is the lease as the executor's credential.
func (l *Lease) Credential() *action.Credential {
	inj := action.Injection{Format: action.InjectBearer}
	if l.t.typ == "DPoP" {
		key, err := l.m.loadKey(dpopKeyID(l.id))
		inj = action.Injection{Format: action.InjectDPoP, Proof: func(method, url string, at []byte, nonce string) (string, error) {
			if err != nil {
				return "", err
			}
			return key.DPoPProof(method, url, string(at), nonce, l.m.now())
		}}
	}
	return &action.Credential{Injection: inj, Secret: l}
}

var errReleased = errors.New("oauth: the lease was released")

// WithSecret implements action.SecretSource.
func (l *Lease) WithSecret(ctx context.Context, use func(secret []byte) error) error {
	if len(l.value.b) == 0 {
		return errReleased
	}
	return use(l.value.b)
}

// Release wipes the lease's copy and records the use.
func (l *Lease) Release(used bool) {
	l.value.wipe()
	if used {
		l.m.tokens.markUsed(l.id)
	}
}

// markUsed records the last confirmed use, at most once a minute per
// authorization: each write is a synchronous commit, and the inventory
// needs the day, not the millisecond.
func (m *tokens) markUsed(id string) {
	now := m.now()
	m.mu.Lock()
	if m.usedAt == nil {
		m.usedAt = map[string]time.Time{}
	}
	last := m.usedAt[id]
	if now.Sub(last) < time.Minute {
		m.mu.Unlock()
		return
	}
	m.usedAt[id] = now
	m.mu.Unlock()
	m.db.Model(&row{}).Where("id = ?", id).Update("last_used", now.Unix())
}

// Invalidate drops the lent access token from the cache and the store when
// the API refused it (401): a provider may revoke or shorten a token before
// its stated expiry, or state none. The next call refreshes. The refused
// call itself is not repeated.
func (l *Lease) Invalidate() {
	m := l.m
	m.mu.Lock()
	if c := m.tokens.cache[l.id]; c == l.t {
		delete(m.tokens.cache, l.id)
	}
	m.mu.Unlock()
	m.db.Model(&row{}).Where("id = ? AND generation = ?", l.id, l.t.gen).Update("sealed_access", nil)
}
