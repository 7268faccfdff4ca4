// Package action performs the HTTP actions agents ask Yett for, with the
// credential injected by Yett and never seen by the agent.
//
// # What the executor guarantees
//
//   - Only the executor sets credentials (bearer, header template, basic,
//     DPoP). The agent can never set Authorization, Proxy-Authorization,
//     Host, hop-by-hop headers, Content-Length, Idempotency-Key or the
//     credential's own header; on a credentialed request not Cookie,
//     Accept-Encoding, Range or If-Range either. A header name given twice
//     in two letter cases is refused.
//   - The URL is read by backend/target, the same reader the gateway and
//     the vault's bindings use: what a binding matched is what is sent, and
//     a path a server would resolve elsewhere ("..", "%2e%2e", "..;",
//     behind an encoded slash or backslash) is refused.
//   - Credentials travel over HTTPS, or plain HTTP to a loopback address.
//   - No redirect is followed; the 3xx goes back to the agent as it is.
//   - Link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10,
//     100.100.100.200, fd00:ec2::254, metadata.google.internal ...) are
//     always refused; private and loopback addresses only when the
//     credential's binding names them. An IPv6 address is also judged by
//     every IPv4 address it may stand for (mapped, IPv4-compatible, 6to4,
//     NAT64 well-known and local-use, SIIT, Teredo, ISATAP).
//   - The address checked is the address dialed: a name is resolved once
//     per request, every address is checked, and the connection goes to a
//     checked IP, re-verified in the dialer's Control hook. No proxy from
//     the environment is ever used.
//   - Connections are reused only by requests with the same key: the same
//     credential (by its secret, under a key that never leaves the
//     Executor), address policy, checked addresses, scheme, TLS server name
//     and port. One credential's connection never carries another's
//     request, and a name that now resolves elsewhere gets a new, checked
//     connection. Connections speak HTTP/1.1, one request at a time;
//     cancelling a request's context closes its connection, and
//     CloseIdleConnections closes every idle one.
//   - Yett asks for the one content coding it decodes (gzip) and decodes it
//     before redaction, within the response cap. On a credentialed request
//     an answer in a coding Yett did not ask for, or a 206 Partial Content,
//     is withheld (a *WithheldError): the request was sent, the body is not
//     returned.
//   - Timeout 30 s and response cap 8 MiB by default (Config).
//   - Every request carries an Idempotency-Key for the logical action.
//   - The injected secret is replaced by [REDACTED] in everything returned
//     (body, headers, status text and error text) in every form an echo
//     gives it: as text in any letter case with any bytes URL-, JSON-, C- or
//     HTML-escaped; as hex; as base64 (standard or URL alphabet) at any
//     alignment, which covers Basic's base64(user:secret).
//
// The executor has no vault dependency: the gateway passes a Credential
// whose SecretSource lends the secret for the duration of one request.
package action
