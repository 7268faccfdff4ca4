// Package procid identifies the process on the other end of the gateway's
// local socket from what the kernel says, never from what the client says.
//
// # From socket to origin
//
// CheckPeer asks the kernel who holds the other end of an accepted
// connection (Linux SO_PEERCRED plus SO_PEERPIDFD where the kernel has it,
// macOS LOCAL_PEERPID/LOCAL_PEERTOKEN, Windows GetNamedPipeClientProcessId)
// and refuses a peer running as another user before a byte is read. That
// peer is the shim (`yett mcp`); Origin walks up from it to the first
// ancestor that is not the same executable: the agent the user approves.
//
// # The run record
//
// A RunRecord binds an approval to one run of one process: pid, the
// kernel's start time (exact, so a reused pid never matches), the
// executable actually running and its SHA-256, the code signer where the OS
// has one ("unsigned" otherwise, said plainly), the parent chain for display
// and a random launch nonce created after the inspection, so two identical
// processes never share a record. Matches re-checks a record against the
// live process before every call; WatchExit reports the end of the run.
//
// Display fields (names, command line) are sanitized for showing to a
// person and carry no authority.
package procid
