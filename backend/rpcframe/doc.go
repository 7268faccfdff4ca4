// Package rpcframe is the policy point every incoming JSON-RPC message passes
// before the MCP SDK sees it.
//
// The gateway reads newline-delimited JSON-RPC 2.0 from a local socket whose
// other end is an untrusted agent. Reader cuts that stream into frames and
// turns each frame into exactly one of:
//
//   - a clean single message (a request, a notification or a response) built
//     from keys this package validated itself, so the SDK never decodes bytes
//     this package did not look at;
//   - a Rejection carrying the JSON-RPC error reply to write back (nil for an
//     invalid notification, which JSON-RPC says must get no answer).
//
// # Guarantees
//
//   - A frame longer than Limits.MaxFrameBytes is never held whole: the
//     reader keeps at most that many bytes, then discards up to the next
//     newline and answers with an error.
//   - Malformed JSON, invalid UTF-8, nesting deeper than Limits.MaxDepth,
//     batches (top-level arrays), non-object values, unknown top-level keys
//     and a wrong "jsonrpc" version are rejected, and so is a key given
//     twice in any object at any depth (compared after unescaping, and
//     ignoring letter case in the message and its params, which the SDK
//     decodes into structs).
//   - The id of a rejected frame is echoed only when it was recovered from a
//     well-formed object with no duplicate keys; otherwise the reply says null.
//     An oversized frame is never held, so its id is recovered by a streaming
//     scan of the bytes being discarded: the first plainly spelled top-level
//     "id" whose value is a plain string or integer is echoed, before or
//     after the overflow, whatever follows it, so the client's call ends at
//     once instead of at its own timeout.
//   - Transport bounds the work one connection holds: at most
//     Limits.MaxInFlight unanswered calls and Limits.MaxHeldBytes of their
//     frames. A call beyond either is answered BUSY (code -32000) with its
//     id and is never handed on: nothing is queued silently.
//   - After any rejection the stream stays usable: the next line is read as a
//     fresh frame.
//
// Transport wraps a connection so that github.com/modelcontextprotocol/go-sdk
// only ever receives clean single messages: a batch or a broken frame cannot
// make the SDK end the session.
package rpcframe
