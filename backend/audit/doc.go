// Package audit is Yett's tamper-evident, blind-write audit log.
//
// Every event the gateway records (authority changes, action intents and
// results) becomes one entry of an append-only file. The entry's payload is
// encrypted with age to an X25519 recipient whose identity lives in the vault,
// so the writer can append while the vault is locked and can never read back
// what it wrote. The ciphertext records are the leaves of an RFC 6962 Merkle
// tree (golang.org/x/mod/sumdb/tlog), and signed checkpoints (tree size and
// root, golang.org/x/mod/sumdb/note, Ed25519) are written into the log itself
// and next to it, so anyone holding the file can check it without any key.
//
// # Guarantees
//
//   - Append returns only after the entry is on stable storage (fsync). Any
//     write or sync error is returned and the log refuses further appends
//     until it is reopened: it never writes after a gap (fail closed).
//   - A torn last record left by a crash is detected on open, its bytes are
//     saved aside, the file is cut back to the last whole record and the
//     repair is itself recorded as an event. Nothing acknowledged is lost.
//   - Verify needs no key and no network. It tells tampering (evidence, with
//     the first bad index) from an unreadable file (I/O) and from a torn tail.
//     With a checkpoint kept elsewhere it also detects truncation and
//     rewrites; without one it says exactly what it cannot detect.
//
// # Layout
//
// A log directory holds "log" (the records), "checkpoint" (the latest signed
// checkpoint), "verifier.key" (the public note verifier key) and
// "signing.key" (the Ed25519 note signing key, mode 0600). The exact formats
// are in docs/audit-format.md.
//
// The package never imports the vault: the writer takes an age.Recipient, the
// reader an age.Identity, and the verifier only the files.
package audit
