// Package approval holds the person's decisions about agent runs: session
// approvals and per-call approvals, in memory only.
//
// # What a session approval is bound to
//
// A Session belongs to one run of one origin process as the gateway inspected
// it (a procid.RunRecord, including the launch nonce the gateway made after
// the inspection), to the gateway boot id (random per start, never written
// anywhere the gateway reads back) and to the vault epoch current when the
// person was asked. Valid re-checks all three on every call. A session ends
// when its run ends (process exit, connection closed, identity mismatch), when
// the vault epoch moves (lock, unlock, reset), on Revoke, and implicitly when
// the gateway restarts, because nothing here is persisted or reloaded. Two
// identical processes have different runs and never share a session.
//
// # Pending requests
//
// A request (a card) waits at most Config.Timeout (120 s by default). It is
// withdrawn, and every call waiting on it denied, when its run ends or the
// vault epoch changes while it waits: the card disappears. Per-call approvals
// are requests of their own kind, asked after a valid session, and a session
// never stands in for one.
//
// # What changed
//
// Each session card says why the person is asked: "first request", "agent
// restarted", "gateway restarted", "vault was locked", "identity changed",
// "agent reconnected" or "session was revoked". The broker knows the ended
// sessions of the current boot; the gateway adds durable evidence of earlier
// boots from the journal. Nothing the client says is ever used.
//
// # Surfaces
//
// The desktop app, its native notifications (backend/notify) and `yett
// serve` (its terminal) list Pending, call Answer with the surface they are
// (SurfaceApp, SurfaceNotification, SurfaceTerminal), list Sessions and
// Revoke; Subscribe tells them when to refresh. The first answer wins; a
// later one gets ErrNotPending. An AnswerPolicy set by the composition root
// refuses answers from a surface the person's settings do not allow for a
// card (ErrWindowOnly), and the card stays pending. Every answer and expiry
// is kept, for this boot, in Decisions.
//
// # Words
//
// Request.Headline, Sentence and Scope say what a card asks in the words
// every surface shows, so a notification says what the window says.
package approval
