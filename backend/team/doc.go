// Package team is Yett's team mode: many machines share one owner
// inventory, drill record, revocation requests and audit checkpoints in a
// PostgreSQL database, and no secret ever leaves the machine that holds it.
//
// # What the database holds
//
// Metadata, evidence and requests only: every inventory row of every
// machine (the columns of the owner inventory, plus the machine and the
// member), drill reports with their steps and verdicts and a SHA-256
// digest of each step's evidence in place of the evidence itself, each
// row's drill schedule and review date, each machine's signed audit
// checkpoints and their cosignatures, and the lead's revocation requests
// with what the machine that holds the authorization did about them. No
// credential, token, request or response body, argument value or audit
// entry content is ever written there; docs/team-format.md lists every
// table and column, and a test scans every table for the canary secrets
// of every machine.
//
// # Who may do what
//
// No server of Yett's sits in front of the database. Each machine logs in
// as a PostgreSQL role of its own, whose name is the machine's id in every
// table. Row-level security, forced on every table, lets a member's role
// read and write only its own machine's rows (identified by current_user)
// and answer only the revocation requests addressed to it; the lead's
// group role reads every row and is the only one that may insert a
// revocation request. The administrative role (the one that ran
// `yett team create`, able to CREATE ROLE) owns the tables; its password
// lives in the lead's vault and is used only by the team commands that
// invite and remove.
//
// Every record a machine writes is signed with its team signing key
// (Ed25519, sealed in its vault; the public half is in team_machines), and
// every revocation request with the founding lead's key, which a member
// pinned when it joined (the invitation carries its fingerprint): a
// member acts only on requests that key signed, so the database's own
// administrators cannot make a member revoke anything.
//
// # Joining
//
// An invitation is a one-time code: the database's address, a login role
// made for the invitee with a random password, the team's id, the
// invitation's id and the founding lead key's fingerprint. The database
// keeps only a hash of it. Joining checks the fingerprint, registers the
// machine and its public key (row-level security admits only a role with
// an unused, unexpired invitation), marks the invitation used and, in the
// same transaction, sets the role's password to a fresh one only the
// joining machine's vault knows: the code is worthless afterwards.
//
// # Offline first
//
// What a machine shares goes first into a durable, ordered outbox in its
// data directory (team.db, SQLite), and from there to the database once,
// in order, by idempotent upserts keyed by machine and record with the
// outbox's sequence number, so a resend after a crash or a lost
// acknowledgement changes nothing. Revocation requests are read from
// their table, every pending one on every reconnect; LISTEN/NOTIFY only
// wakes a connected machine early.
package team
