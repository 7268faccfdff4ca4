// Package witness is Yett's side of the C2SP tlog-witness protocol: a
// witness that cosigns the audit checkpoints of a team's machines, and the
// client a machine uses to have each of its checkpoints cosigned.
//
// A machine's audit log (backend/audit) signs its own checkpoints, with a key
// kept on that machine. Anyone who can write the machine's files can
// therefore cut the log and sign again, or rewrite it whole. A witness is a
// checkpoint kept elsewhere, automatically: it cosigns a checkpoint only if
// it extends the newest one it cosigned for that log (an RFC 6962
// consistency proof), and it never goes back. A log that was cut or
// rewritten after a checkpoint was witnessed can no longer get a
// cosignature, and a cosigned checkpoint proves, offline, that the log held
// that tree at the cosignature's time.
//
// # Formats
//
// Requests and answers are those of c2sp.org/tlog-witness (add-checkpoint:
// an "old N" line, the proof lines, an empty line, the checkpoint). The
// cosignature is c2sp.org/tlog-cosignature's Ed25519 cosignature/v1 (a
// signed-note signature line with key type 0x04 and a timestamp), made with
// filippo.io/torchwood's CosignatureSigner; checkpoints are parsed with
// torchwood's ParseCheckpoint and proofs checked with
// golang.org/x/mod/sumdb/tlog. The details are in docs/audit-format.md.
//
// # The witness
//
// Witness is an http.Handler serving POST /add-checkpoint. It trusts a fixed
// set of log keys (Logs; a Yett machine's audit verifier key names its
// origin) and keeps, per log, the newest tree it cosigned in a Store:
// MemStore in memory, PGStore in PostgreSQL. Store.Advance is a compare and
// swap, so concurrent requests for one log cannot roll it back, and the
// witness stores a cosigned tree before it answers, so a restart loses
// nothing it signed. A checkpoint validly signed by the log's key that shows
// a rollback or a fork is kept as a Refusal: evidence, and what a team's
// lead sees.
//
// # The client
//
// Client.Cosign(ctx, checkpoint, proof) sends one checkpoint and returns it
// with the witness's verified cosignature, or a typed refusal: a
// *ConflictError (the witness cosigned another size), ErrBadProof (the
// checkpoint does not extend what it cosigned), ErrUnreachable (try later).
// Submitter does that for a machine's audit log after each checkpoint: it
// keeps the size last cosigned and the tree's edge there (so a proof reads
// only the records written since), keeps the newest cosigned checkpoint,
// hands it to whoever publishes it (the team core), and records a refusal in
// the audit log, once per distinct refusal.
//
// The package never imports the vault: the witness key comes in as a Key,
// and verifying cosignatures needs only public keys.
package witness
