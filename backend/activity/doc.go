// Package activity projects the decrypted audit log into the two things a
// person asks of it: which agent sessions held authority and why each one
// ended (Sessions), and which calls were asked for and what became of them
// (Activity).
//
// # Guarantees
//
// The projections are pure functions over []audit.Entry in log order: the
// same entries always give the same views, so they can be rebuilt after any
// restart from the log alone. They invent nothing: a session whose end was
// never recorded is reported as such, and an end the log implies (a later
// gateway start or vault lock) is marked inferred. Nothing here can hold a
// secret, because audit.Event has no field for one.
//
// The log is the history, not the live state: a session "open in the log"
// may have ended without an entry (a crash). Live sessions, and revoking
// them, belong to the gateway's approval broker.
package activity
