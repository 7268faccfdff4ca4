// Package providers describes OAuth 2.0 authorization servers: the fixed
// presets Yett ships for well-known providers, and discovery of any other
// server from its issuer URL.
//
// The package only describes servers; it never holds a token, a client
// secret or a key, and it performs no grant. backend/oauth runs the flows
// against the endpoints described here.
//
// # Guarantees
//
//   - Metadata returned by Discover or ParseMetadata names exactly the issuer
//     that was asked for (RFC 8414 §3.3, OpenID Connect Discovery §4.3): a
//     document that claims another issuer is refused with ErrIssuerMismatch,
//     so a server cannot send Yett's tokens to endpoints of another issuer.
//   - Every endpoint in accepted metadata is an absolute https URL, or an
//     http URL whose host is loopback (127.0.0.1, ::1, localhost). Anything
//     else is refused with ErrInsecureEndpoint.
//   - Discovery reads at most MaxMetadataBytes, gives up after
//     DiscoveryTimeout when the caller's context has no deadline, and never
//     follows a redirect to another host or from https to http.
//   - Errors name the field or step that failed; they never contain the
//     response body.
//
// # Presets
//
// Presets lists the providers Yett knows by name. Their endpoints are fixed
// in this package, so connecting to them needs no network discovery;
// Preset.Discovery names the issuer to discover from instead where the provider
// publishes metadata. Each preset's Notes say, in a sentence or two, how
// that provider issues and rotates refresh tokens and how it revokes them,
// because several of them do not follow RFC 7009.
package providers
