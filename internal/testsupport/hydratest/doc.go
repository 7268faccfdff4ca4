// Package hydratest runs a real OAuth 2.0 provider, Ory Hydra v2.3.0, for tests.
//
// It is test support only: nothing outside _test.go files and other test
// support packages may import it. It imports "testing" and fails the calling
// test when Hydra cannot be built or started; it never skips.
//
// # What Start gives a test
//
// [Start] runs one Hydra per call on free loopback ports with its own SQLite
// file in t.TempDir (the in-memory database answers 500 to concurrent
// refreshes of one token; see below), and a login/consent server on 127.0.0.1 that
// logs in [Options.Subject] and grants every requested scope and audience, or
// denies consent after [Hydra.DenyConsent]. [Hydra.Browse] plays the person's
// browser from the authorization URL to the client's redirect URI.
// [Hydra.CountingProxy] sits in front of the public port and counts token
// requests without keeping a token. t.Cleanup stops everything.
//
// The endpoints are Hydra's: PublicURL+"/oauth2/auth", PublicURL+"/oauth2/token",
// PublicURL+"/oauth2/revoke". A private_key_jwt client assertion must name
// PublicURL+"/oauth2/token" as its audience (Hydra's GetTokenURLs), also when
// the request goes through a [Counter].
//
// # Loopback redirect URIs
//
// Hydra (through fosite's isMatchingAsLoopback) accepts an authorization
// request whose redirect_uri is http://127.0.0.1:ANYPORT/path when the client
// registered http://127.0.0.1/path, or the same with any port: for http on a
// loopback IP literal the port is ignored, as RFC 8252 section 7.3 asks. Host,
// path and query must match exactly, so a client that listens on 127.0.0.1 with
// an ephemeral port and path /callback registers "http://127.0.0.1/callback".
// "localhost" is not a loopback IP literal and gets no such leniency, and
// 127.0.0.1 does not match [::1].
//
// # Concurrent refreshes
//
// The SQLite file avoids the in-memory database's steady 500s but does not
// make Hydra safe for concurrent refreshes of one refresh token. Eight at once, repeated over five fresh tokens, gave
// anything from one success to eight (all with new tokens), invalid_grant,
// invalid_request ("Failed to refresh token. Please retry the request.") and
// now and then 500 server_error; usually reuse detection then revoked the
// whole family. A client must send one refresh at a time.
//
// # Finding the binary
//
// YETT_HYDRA_BIN names a Hydra binary to use. Otherwise the first Start in a
// test process runs build/scripts/hydra.sh at the root of this module, which
// builds Hydra once (several minutes cold) and caches it in .cache/hydra/.
//
// # Speed
//
// Start copies an empty, migrated database instead of running
// `hydra migrate sql up` (0.8 s) each time: the first Start for a binary
// migrates once into .cache/hydra/schema-*.sqlite. It also installs an
// RSA-2048 ID token key, made once per test process, because Hydra would
// otherwise generate an RSA-4096 key during the first authorization (1 to 4 s).
//
// # Secrets
//
// Nothing here prints a token, code or client secret. Hydra's own log goes to a
// file in t.TempDir; when Start fails the test log gets that file's path and
// its last 40 lines (Hydra does not log form bodies or query values unless
// LOG_LEAK_SENSITIVE_VALUES is set, which Start forbids).
package hydratest
