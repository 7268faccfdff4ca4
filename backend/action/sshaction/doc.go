// Package sshaction performs the SSH actions agents ask Yett for: one command on
// one host a person added to Yett, with a key that never leaves Yett and a
// host key the person pinned.
//
// # What it guarantees
//
//   - The client key is lent by a KeySource for the one connection that
//     needs it and is parsed, used for the signature and dropped; the
//     executor keeps no copy. The key never reaches the remote command's
//     environment, the agent or any output.
//   - The host must present one of its pinned keys. HostKeyAlgorithms is
//     limited to the pinned keys' types, so a server offering another type
//     first is not mistaken for a mismatch, and no unpinned type is ever
//     negotiated. A different key is *HostKeyError (ErrHostKeyChanged):
//     refused before authentication, so the key signs nothing for it.
//   - No agent forwarding, no port forwarding, no X11, no pty, no
//     environment variables: the session asks for exactly one "exec". The
//     client refuses every channel the server opens towards it.
//   - Outcomes say what is known. An error wrapping ErrNotStarted means the
//     exec request was never sent (dial, handshake, host key, authentication,
//     session): nothing ran. After the exec request left, a broken transport
//     is ErrTransport: the command may have run. A command Yett ended itself
//     (timeout, output cap, cancelled context) has Result.Ended set; it was
//     asked to stop with SIGHUP and its session was closed.
//   - Standard output and standard error share one cap (8 MiB by default);
//     when it is reached the result is flagged truncated and the command is
//     ended, so a flood costs at most the cap.
//   - Connections are reused only for the same host record at the same
//     version, one command at a time; Close and CloseIdle end them.
//
// Parsers of what a person pastes or imports (private keys, host keys,
// known_hosts files, command rules) bound their input and never echo it in
// an error.
package sshaction
