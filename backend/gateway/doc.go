// Package gateway is Yett's local gateway: the per-user socket agents reach
// through `yett mcp`, the MCP server behind it, and the decision pipeline every
// tool call passes.
//
// # The socket and the caller
//
// The gateway listens on <runtime>/gateway.sock (a 0600 socket in a 0700
// directory) and holds <runtime>/gateway.lock, so one gateway runs per runtime
// directory. On Windows it listens instead on the named pipe
// \\.\pipe\yett-<user SID>-<hash of the runtime directory>, created as the first
// instance (a pipe someone made before us is ErrAddressTaken, never served
// through), refusing remote clients, with the DACL D:P(A;;GA;;;<user SID>);
// Dial checks that the pipe's server runs as the same user. On accept it asks
// the kernel who is on the other end (procid.Identify, or
// procid.CheckPipeClient on Windows: a peer of another user is refused before
// a byte is read), records the origin process as a run with a fresh launch
// nonce, and ends that run the moment the process exits (procid.WatchExit). Each connection gets its
// own MCP server session over rpcframe.Transport, so the SDK only ever sees
// clean single JSON-RPC messages.
//
// # Tools
//
// yett.status is always listed. http.request and ssh.exec are listed only
// while the vault is unlocked; lock and unlock change the list (the SDK
// sends notifications/tools/list_changed). Schemas are pinned by golden
// files.
//
// # One pipeline for every channel
//
// send performs every call the same way whatever its channel: the last
// checks, the credential lent once, one durable step (journal dispatch and
// audit intent, one fsync: the journal's log carries the audit log's
// records, see backend/audit Carrier), the action under a context the next vault lock cancels,
// the outcome recorded in both and made durable by the next group commit
// (within 10 ms, not waited for). What differs is a performer
// (perform.go): httpAction sends an http.request or a named operation;
// sshAction (sshperform.go) runs an ssh.exec command with the host's key
// (backend/action/sshaction). ssh.exec adds its host's own checks before any card
// or connection (sshexec.go): a host named in Yett (never an address), a
// pinned host key and no unreviewed host key change, a command its rules
// allow. Its cards name the host, the user and the exact command; a host
// key that is not pinned is refused before authentication, recorded on the
// host and audited; a broken connection after the command left, a timeout,
// the output cap or a vault lock end in STATUS_UNKNOWN with what the
// command printed, and yett.status answers for SSH calls from the same
// journal (COMPLETED exit=N, COMPLETED signal=NAME).
//
// # The order of checks, each final
//
// For every http.request: vault gate (locked: LOCKED, denied at once, nothing
// kept but the audit entry naming method, host and key: no queue, no retry, no
// card) -> valid request and a credential bound to its host and path (the
// binding chosen from the metadata decrypted at unlock) -> the run still
// matches the live process -> a session approval valid for this boot id,
// vault epoch and launch nonce (else a card says what changed; a new process
// waits on it at most the approval timeout like any first request, a process
// whose own authority ended is answered REAUTH_REQUIRED at once) -> per-call
// approval where the credential demands it -> vault epoch, boot id and live
// process checked again, the secret read (once) -> one durable step: the
// journal's dispatch record queued, then the audit intent entry written
// and carried by the journal's log, one group commit for both -> the HTTP executor sends, with the
// Idempotency-Key, under a context the next vault lock cancels (cutting the
// connection) -> the outcome written to the journal and the audit log,
// durable with the next group commit and not waited for -> response.
//
// Every tools/call is routed to its pipeline by name (routeCalls), whatever
// the SDK's tool table holds at that moment, so a call racing a lock reads
// LOCKED and never "unknown tool". One connection holds at most a bounded
// number of unanswered calls (rpcframe.Limits); more are answered BUSY.
//
// A refusal is one value (refusal.go): the code and text the agent reads
// and the reason the audit log records are built from it together.
//
// # What the agent is told
//
// Every answer is chosen text starting with a code the agent can branch on
// (LOCKED, INVALID_REQUEST, NO_CREDENTIAL, REAUTH_REQUIRED <reason>, DENIED,
// APPROVAL_TIMEOUT, AUDIT_UNAVAILABLE, STATUS_UNKNOWN inspect_activity_journal,
// RETRY_SAFE previous_action_not_started, ...), never an internal error's text
// and never a secret.
//
// # How "what changed" is known
//
// Never from the client. For a run without a valid session the gateway asks
// the broker (sessions that ended in this boot: same process => "vault was
// locked", "identity changed", "agent reconnected", "session was revoked";
// same executable, other process => "agent restarted", or "another run of
// this program" while one is live), then the journal's durable record of runs
// approved in earlier boots (same pid and kernel start stamp => "gateway
// restarted"; same executable => "agent restarted"). Otherwise it is a "first
// request". The card carries a sentence of what Yett knows (when the earlier
// run ended, which one is live).
package gateway
