// Package procid identifies the process on the other end of the gateway's
// local socket from what the kernel says, never from what the client says.
//
// # From socket to origin
//
// CheckPeer asks the kernel who holds the other end of an accepted
// connection (Linux SO_PEERCRED plus SO_PEERPIDFD where the kernel has it,
// macOS LOCAL_PEERPID/LOCAL_PEERTOKEN, Windows GetNamedPipeClientProcessId)
// and refuses a peer running as another user before a byte is read. That
// peer is the shim (`yett mcp`), and the origin, the process the user
// approves, is the one that writes into the shim and reads what it
// answers: the process holding the other ends of its stdin and stdout.
//
// Origin walks up from the shim to the first ancestor that is not the same
// executable, passing over wrappers (a shell, npx) that handed their own
// stdio on to the shim. That process is the origin when it holds the other
// ends. When it does not (a program the agent ran started a driver and
// exec'd the genuine shim on pipes the driver holds), Identify makes the
// one process of this user that holds them the origin, or, when no single
// one can be named, the shim itself: the process that started the shim
// never receives an approval for what another process sends. On Linux the
// ends are read from /proc (a pipe's inode and access mode) and sock_diag
// (a socket pair's peer, as Node's libuv makes them); macOS and Windows
// offer no such view without privileges, and the record says "not
// checked" there.
//
// # The run record
//
// A RunRecord binds an approval to one run of one process: pid, the
// kernel's start time (exact, so a reused pid never matches), the
// executable actually running and its SHA-256, a hash of its command line,
// the code signer where the OS has one ("unsigned" otherwise, said
// plainly), the parent chain and the shim's own parent for display, and a
// random launch nonce created after the inspection, so two identical
// processes never share a record. Matches re-checks a record against the
// live process before every call; WatchExit reports the end of the run.
// On Linux a record keeps a pidfd and /proc handles of the process open,
// so Matches re-reads only what can change; Close releases them.
//
// An exec of the same interpreter (`exec node other.js`) keeps pid, start
// time and executable: the command line is what tells the new program
// apart. A process can rewrite its own argv, so that check is a tripwire,
// not a proof.
//
// Display fields (names, command lines) are sanitized for showing to a
// person and carry no authority.
package procid
