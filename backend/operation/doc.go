// Package operation is the named-operation catalogue: the calls a person
// defined for agents, each binding one OAuth authorization to one call shape
// (method, a URL template with a fixed host, typed parameters, an optional
// body schema, an approval mode). The gateway lists them as MCP tools; an
// agent supplies parameter values only, and never names a token, an
// endpoint or a scope.
//
// # Guarantees
//
//   - An operation is validated before it is stored (Validate), and an
//     agent's arguments before a call is built (Render): unknown, repeated or
//     case-folded keys, values outside the allowed set, dot segments in the
//     path and bodies outside the schema are refused with an ArgError whose
//     text names the parameter and the rule, never the value.
//   - The catalogue keeps every operation in memory, loaded when it opens
//     and replaced after each committed change, so looking one up for a
//     tools/call never touches the database. It assumes it is the only
//     writer of its file, as the process that holds the audit log is.
//   - Storage is <data dir>/operations.db (backend/store, its own migration
//     history). Versions before it kept operations in oauth.db's
//     oauth_operations table: the first migration copies those rows in the
//     same transaction that creates the catalogue, so an upgrade keeps them.
//   - The catalogue knows OAuth custody only through Authorizations: whether
//     the authorization an operation names exists.
package operation
