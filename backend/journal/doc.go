// Package journal is the gateway's durable activity journal: what happened to
// each call an agent made, so that after a reconnect or a gateway crash the
// agent is told facts, not hope.
//
// # States
//
// Every call moves intent -> dispatched -> result, or intent -> not_dispatched
// when it was refused after its intent was written. Each move is a committed
// SQLite transaction (WAL, synchronous=FULL, through backend/store), and the
// dispatched row is committed before the request leaves the gateway. So after a
// crash:
//
//   - a call left at intent or not_dispatched never left: RETRY_SAFE;
//   - a call left at dispatched may or may not have reached its target:
//     STATUS_UNKNOWN, and it is never sent again by the gateway;
//   - a call at result is complete and its recorded outcome is returned.
//
// # Scope of an idempotency key
//
// Agents name their calls with an idempotency key. Lookups are scoped by the
// key and the SHA-256 of the origin executable the kernel reported, because
// that is the only identity that honestly survives an agent restart (the pid,
// start time and launch nonce do not, by design). One agent program cannot
// read another program's outcomes; two instances of the same program can read
// each other's outcomes if they know the key. What is returned is small on
// purpose (status code, class, sizes, a body hash), so that sharing costs
// little. An upgraded agent (a new executable hash) no longer sees its old
// keys.
//
// # What is not stored
//
// No secret, header, URL query or body: the journal stores the method, the
// target host, the path, sizes, status class and SHA-256 hashes.
//
// # Evidence of earlier runs
//
// The journal also records each gateway boot and each approved run (pid,
// kernel start stamp, executable hash, boot id). The gateway reads these after
// a restart to tell the person and the agent "gateway restarted" from durable
// evidence. They are never reloaded as approvals.
package journal
