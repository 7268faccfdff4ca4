package audit

// Reasons a call is refused before or around its dispatch, besides the
// authority reasons in event.go. Every reason the gateway records is one of
// these named constants: the agent's answer and the audit entry are built
// from the same refusal, so the audit vocabulary is the gateway's.
const (
	// ReasonCancelled: the agent went away (or cancelled) before the call
	// was sent.
	ReasonCancelled Reason = "cancelled"
	// ReasonJournalUnavailable: the journal could not record the call
	// durably, so it was not sent.
	ReasonJournalUnavailable Reason = "journal_unavailable"
	// ReasonKeyReused: the idempotency key names an earlier call with a
	// different request.
	ReasonKeyReused Reason = "idempotency_key_reused"
	// ReasonCredentialChanged: the credential was edited, removed or became
	// unreadable while the call waited.
	ReasonCredentialChanged Reason = "credential_changed"
	// ReasonNeedsReconnection: the authorization behind an operation must be
	// reconnected by its owner.
	ReasonNeedsReconnection Reason = "authorization_needs_reconnection"
	// ReasonUncontrolled: the authorization has no owner or backup revoker
	// and such authorizations are blocked.
	ReasonUncontrolled Reason = "uncontrolled"
	// ReasonProviderUnreachable and ReasonProviderRefused: an access token
	// could not be renewed (network, or the provider said no).
	ReasonProviderUnreachable Reason = "provider_unreachable"
	ReasonProviderRefused     Reason = "provider_refused"
	// ReasonRefusedBeforeSend: the executor refused the request before any
	// byte was sent (a target or header the policy forbids).
	ReasonRefusedBeforeSend Reason = "refused_before_send"
	// ReasonBusy: the connection already held its limit of unanswered calls.
	ReasonBusy Reason = "busy"
	// ReasonFrameRejected: a frame was refused at the policy point (a batch,
	// malformed or oversized JSON, an invalid notification); the entry's
	// operation names which.
	ReasonFrameRejected Reason = "frame_rejected"
	// ReasonCutByLock: the vault locked while the request was in flight;
	// Yett cut its connection (the result says whether bytes had left).
	ReasonCutByLock Reason = "cut_by_lock"
	// ReasonUpstreamNotReady: the upstream MCP server was not connected
	// (starting, stopped, or edited since its tools were listed); nothing
	// was sent.
	ReasonUpstreamNotReady Reason = "upstream_not_ready"
	// ReasonUpstreamWithheld: the upstream server answered and Yett
	// withheld its answer (it could not be cleaned of the server's secret).
	ReasonUpstreamWithheld Reason = "upstream_answer_withheld"
)

// ReasonKeyInUse: the idempotency key names the same request, which left or
// is in flight; the agent is told its fate and it is not sent again.
const ReasonKeyInUse Reason = "idempotency_key_in_use"

// ReasonWithdrawn: the card the call waited on was withdrawn (the agent
// exited, its identity changed, or the vault was locked or unlocked).
const ReasonWithdrawn Reason = "approval_withdrawn"

// Reasons the composition root (backend/keeper) records vault events with,
// besides the lock reason the vault gives.
const (
	// ReasonVaultCreated: the vault_unlocked entry of a vault's creation.
	ReasonVaultCreated Reason = "vault_created"
	// ReasonEpochNotSaved follows a lock's reason when the disk refused the
	// new epoch (it moved in memory only).
	ReasonEpochNotSaved Reason = "epoch_not_saved"
)
