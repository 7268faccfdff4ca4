// Package proof signs the JWTs with which Yett proves possession of a key
// to an OAuth authorization server: private_key_jwt client assertions
// (RFC 7523 §2.2 and §3, OpenID Connect Core §9) and DPoP proofs (RFC 9449).
//
// Keys are ECDSA P-256 and sign with ES256. The private half is meant to
// live in Yett's vault: the caller seals the bytes of Key.PKCS8 and hands
// them back to ParseKey when it needs to sign. This package persists
// nothing.
//
// # Guarantees
//
//   - A Key never prints, logs or marshals its private half: fmt verbs,
//     slog and encoding/json all show a redacted form.
//   - PublicJWK, JWKS and the jwk header of a DPoP proof carry only the
//     public parameters (kty, crv, x, y and descriptive members), never "d".
//   - Thumbprint is the RFC 7638 SHA-256 thumbprint of the public key, and
//     the kid of every JWK and client assertion.
//   - Error strings never contain key bytes, an access token, a signed JWT
//     or the URL being proved (whose query may hold a secret).
package proof
