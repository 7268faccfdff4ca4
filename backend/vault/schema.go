package vault

import "github.com/yettdev/yett/backend/store"

// schema is the vault database's migration history (append only).
var schema = []store.Migration{
	{Version: 1, Name: "vault tables", Up: store.Statements(vaultTables...)},
}

var vaultTables = []string{
	// One row: the vault header (KDF parameters and the passphrase-wrapped
	// data key), the optional keyring-wrapped data key and the manifest.
	`CREATE TABLE vault_meta (
			id INTEGER PRIMARY KEY CHECK (id = 1),
			header BLOB NOT NULL,
			keyring_wrap BLOB,
			manifest BLOB
		)`,
	// Sealed records; kind and version are also bound into each record's
	// associated data, so editing these columns breaks authentication.
	`CREATE TABLE vault_records (
			id TEXT PRIMARY KEY,
			kind TEXT NOT NULL,
			version INTEGER NOT NULL,
			sealed BLOB NOT NULL
		)`,
	// The epoch lives apart from vault_meta so it exists before the vault
	// is created and survives a reset: it must never repeat.
	`CREATE TABLE vault_epoch (
			id INTEGER PRIMARY KEY CHECK (id = 1),
			value INTEGER NOT NULL
		)`,
	`INSERT INTO vault_epoch (id, value) VALUES (1, 0)`,
	// Failed unlock attempts, kept apart from the vault's contents so a
	// wrong passphrase changes nothing but this counter.
	`CREATE TABLE unlock_throttle (
			id INTEGER PRIMARY KEY CHECK (id = 1),
			failures INTEGER NOT NULL,
			last_failure_unix_nano INTEGER NOT NULL
		)`,
	`INSERT INTO unlock_throttle (id, failures, last_failure_unix_nano) VALUES (1, 0, 0)`,
}
