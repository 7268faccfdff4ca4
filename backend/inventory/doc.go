// Package inventory is the owner inventory of every authorization Yett
// holds, and the revocation drills that prove each can be cut off.
//
// # The table
//
// One Row per authorization an agent can cause to be used: every OAuth
// connection and every HTTP credential (SSH keys join as one more Source).
// Sources say what custody knows (provider, account, scopes, how it was
// created, its state); the inventory keeps what a person answers for in a
// database of its own (inventory.db): the owner, the backup revoker, the
// environment of a manual secret, the expiry review date and the drill
// schedule, plus the drill reports and the last confirmed use of each,
// projected from the audit log. A row with any required column empty is not
// under control and names the columns it misses; while the person blocks
// such rows, the gateway refuses every call that would use one (Blocked).
// Every edit is an audit entry. Exports (CSV, JSON) carry the rows, which
// hold no secret and no token by construction.
//
// # Drills
//
// A full drill (seed 002's) cuts an authorization off for good: local
// disable, revocation of the refresh and access tokens at the provider (RFC
// 7009, verified by introspection), a call by Yett's own drill client
// through the real gateway that is refused locally, proof that nothing an
// agent holds can reconnect it, and the sessions and processes that used
// it, from the audit log. It ends revoked; the owner reconnects it. It runs
// only when its owner starts or confirms it.
//
// An unattended drill is safe on a schedule with nobody present: it
// suspends the authorization locally, has the drill client's call refused,
// checks the provider's revocation endpoint without revoking anything in
// service, checks the refresh token is still active, reads the audit log,
// resumes the authorization and has the drill client's call pass every
// local check again. Its report names the full drill's steps it did not
// exercise.
//
// Every step records what it did, its evidence, its duration and whether it
// passed. A failed step stops the drill where it is safe: locally disabled,
// never half re-enabled, with words for the owner. Reports are stored,
// recorded in the audit log (drill_started, drill_step, drill_finished) and
// exportable as JSON.
package inventory
