// Package audit is Yett's tamper-evident, blind-write audit log.
//
// Every event the gateway records (authority changes, action intents and
// results) becomes one entry of an append-only file. Entries are sealed in
// segments: each segment starts with a fresh symmetric key, encrypted with age
// to an X25519 recipient whose identity lives in the vault, and its entries
// are sealed under that key with XChaCha20-Poly1305. So the writer can append
// while the vault is locked, pays one public-key operation per segment, and
// cannot read back what it wrote once a segment ends and its key is wiped
// (at every checkpoint, which the gateway makes at every vault lock). The
// records are the leaves of an RFC 6962 Merkle tree
// (golang.org/x/mod/sumdb/tlog), and signed checkpoints (tree size and root,
// golang.org/x/mod/sumdb/note, Ed25519) are written into the log itself and
// next to it, so anyone holding the file can check it without any key.
//
// # Guarantees
//
//   - Append returns only after the entry is on stable storage (fsync). Any
//     write or sync error is returned and the log refuses further appends
//     until it is reopened: it never writes after a gap (fail closed).
//   - A torn last record left by a crash is detected on open, its bytes are
//     saved aside, the file is cut back to the last whole record and the
//     repair is itself recorded as an event. Nothing acknowledged is lost.
//   - Open does not replay the whole log: it trusts the compact tree a
//     checkpoint left (once it folds to a signed root), checks the records
//     after it, and verifies everything else in the background; a failure
//     there stops the log as a failure at Open would (Log.Verification).
//   - Verify needs no key and no network. It tells tampering (evidence, with
//     the first bad index) from an unreadable file (I/O) and from a torn tail.
//     With a checkpoint kept elsewhere it also detects truncation and
//     rewrites; without one it says exactly what it cannot detect.
//
// # Layout
//
// A log directory holds "log" (the records), "checkpoint" (the latest signed
// checkpoint), "tree-state" (the compact tree at that checkpoint, for Open),
// "verifier.key" (the public note verifier key) and "signing.key" (the
// Ed25519 note signing key, mode 0600). The exact formats are in
// docs/audit-format.md.
//
// The package never imports the vault: the writer takes an age.Recipient, the
// reader an age.Identity, and the verifier only the files.
package audit
