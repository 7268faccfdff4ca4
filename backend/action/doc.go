// Package action performs the HTTP actions agents ask Yett for, with the
// credential injected by Yett and never seen by the agent.
//
// # What the executor guarantees
//
//   - Only the executor sets credentials (bearer, header template, basic).
//     The agent can never set Authorization, Proxy-Authorization, Host,
//     Cookie on a credentialed request, hop-by-hop headers, Content-Length,
//     Idempotency-Key or the credential's own header.
//   - Credentials travel over HTTPS, or plain HTTP to a loopback address.
//   - A credentialed request never follows a redirect; the 3xx goes back to
//     the agent as it is.
//   - Link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10,
//     100.100.100.200, fd00:ec2::254, metadata.google.internal ...) are
//     always refused; private and loopback addresses only when the
//     credential's binding names them.
//   - The address checked is the address dialed: names are resolved once,
//     every resolved address is checked, and the connection goes to a
//     checked IP, re-verified in the dialer's Control hook. No proxy from
//     the environment is ever used, and connections are not pooled across
//     requests, so none dialed under one policy serves another.
//   - Timeout 30 s and response cap 8 MiB by default (Config).
//   - Every request carries an Idempotency-Key for the logical action.
//   - The injected secret, and its encodings (base64, basic's
//     base64(user:secret), URL-escaped), are replaced by [REDACTED] in
//     everything returned: body, headers, status text and error text.
//
// The executor has no vault dependency: the gateway passes a Credential
// whose SecretSource lends the secret for the duration of one request.
package action
