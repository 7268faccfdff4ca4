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
// yett.status is always listed. http.request is listed only while the vault
// is unlocked; lock and unlock change the list (the SDK sends
// notifications/tools/list_changed). Schemas are pinned by golden files.
//
// # The order of checks, each final
//
// For every http.request: vault gate (locked: LOCKED, denied at once, nothing
// kept: no queue, no retry, no card) -> valid request and a credential bound to
// its host and path -> the run still matches the live process -> a session
// approval valid for this boot id, vault epoch and launch nonce (else a card
// says what changed; a first request waits on it at most the approval timeout,
// a request after an authority change is answered REAUTH_REQUIRED at once) ->
// per-call approval where the credential demands it -> journal intent durable
// -> audit entry durable (fail closed) -> vault epoch and boot id re-checked ->
// journal "dispatched" durable -> the HTTP executor sends, with the
// Idempotency-Key -> result journaled and audited -> response.
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
// same executable, other process => "agent restarted"), then the journal's
// durable record of runs approved in earlier boots (same pid and kernel start
// stamp => "gateway restarted"; same executable => "agent restarted").
// Otherwise it is a "first request".
package gateway
