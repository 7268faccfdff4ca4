// Package oauthtest is test support only: an in-process OAuth 2.0
// authorization server and protected resource for the two features that Ory
// Hydra v2.3.0 (the real provider the other tests run against) lacks, the
// device authorization grant and DPoP. Import it only from _test.go files.
//
// New starts a Provider on 127.0.0.1 for one test. It serves one client
// (Options.ClientID) and one user (Subject), keeps all state in memory, and
// answers as the RFCs below say a server must, so that a client that passes
// against it is not merely compatible with a lenient fake. Approval of a
// device code happens through Provider.ApproveDevice instead of a browser.
//
// # What it follows
//
//   - RFC 8414: metadata at /.well-known/oauth-authorization-server.
//   - RFC 8628 §3.1–3.5: device authorization (/device_authorization) and the
//     device_code grant with authorization_pending, slow_down, access_denied
//     and expired_token; §6.1: user codes of 8 characters from
//     BCDFGHJKLMNPQRSTVWXZ, shown as XXXX-XXXX, matched case-insensitively
//     with or without the dash.
//   - RFC 6749 §2.3.1 and §3.2.1: a confidential client authenticates with
//     client_secret_basic (form-urlencoded id and secret) at every endpoint,
//     including device authorization (RFC 8628 §3.1); a public client sends
//     only client_id (token_endpoint_auth_method "none"). §3.1: repeated
//     parameters are refused. §5.1–5.2: token and error responses, no-store.
//     §6: refresh may narrow, never widen, the scope. §4.4: client_credentials
//     for confidential clients only, without a refresh token.
//   - RFC 9700 §4.14.2: every refresh rotates the refresh token; presenting a
//     superseded one fails with invalid_grant and revokes the whole grant
//     (every refresh and access token descended from the same device code).
//   - RFC 7009: /revoke answers 200 for unknown tokens; revoking a refresh
//     token revokes its grant, revoking an access token revokes that token.
//   - RFC 7662: /introspect returns active, scope, client_id, sub, exp, iat,
//     token_type (access tokens) and cnf.jkt (bound tokens).
//   - RFC 9449 §4.3: proofs are checked in full (one DPoP header, typ
//     dpop+jwt, alg ES256 only, no crit, a public P-256 jwk without private
//     members whose point is on the curve, signature, jti, htm, htu, iat
//     within ±60 s, ath at the resource, nonce when required, jti never
//     seen before). htu is compared without query and fragment after
//     normalizing scheme and host case, a default port and an empty path
//     (part of RFC 3986 §6.2.2–6.2.3; no percent-encoding or dot-segment
//     normalization). §5: DPoP access tokens carry cnf.jkt (RFC 7638
//     thumbprint, §6.1) and a public client's refresh token is bound to the
//     same key; a confidential client's refresh token is not bound (§5 says
//     it is already sender-constrained). §7: /resource takes
//     "Authorization: DPoP" with a proof, refuses a DPoP-bound token sent as
//     Bearer. §8–9: with Options.DPoPNonce the token endpoint answers 400
//     use_dpop_nonce and the resource 401 with WWW-Authenticate
//     error="use_dpop_nonce", both with a DPoP-Nonce header.
//
// DPoP is always supported and advertised (dpop_signing_alg_values_supported
// is always ["ES256"]): a proof that is sent is always checked and binds the
// tokens. Options.RequireDPoP only makes a missing proof an error at /token.
//
// # What it simplifies
//
//   - One client, one user (Subject), scopes "read" and "write" with "read"
//     as the default; no authorization endpoint, so no authorization code
//     grant and response_types_supported is empty.
//   - Tokens are opaque random strings looked up in memory, not JWTs.
//     Refresh tokens do not expire; only revocation and reuse end them.
//   - The verification URI serves a plain page; approval is a test control.
//   - Wire fields in seconds are rounded up to whole seconds (at least 1), so
//     tests may use sub-second Options and the client still sees valid
//     values; the provider itself enforces the exact durations.
//   - A poll counts as too fast when it arrives more than 5% of the interval
//     early, to absorb timer jitter in a client that waits exactly the
//     interval; the first poll is timed from the device authorization.
//     Once approved, the next poll gets tokens however early it comes.
//     After slow_down the interval grows by Options.SlowDownStep, which
//     defaults to the 5 s of RFC 8628 §3.5 and may be set small.
//   - Nonces never expire and the provider never rotates them on success;
//     the authorization server and the resource keep separate nonce sets,
//     as two real servers would. A proof's jti is spent once its signature
//     and claims check out, even if its nonce is then refused. Seen jti
//     values are kept for twice the iat window, after which the iat check
//     refuses the proof anyway.
//   - A key mismatch on a bound refresh token is invalid_grant and does not
//     revoke the grant; an unbound token sent with the DPoP scheme is
//     refused rather than accepted as a bearer token.
//   - Introspection and revocation take the same client authentication as
//     the token endpoint, not a separate resource-server credential.
package oauthtest
