package app

import (
	"strings"
	"time"

	"github.com/yettdev/yett/backend/credimport"
)

// ImportPreview is what a file or pasted text held, for the person to
// choose from: each entry's name, where it came from and what it looks
// like, never a value. The values stay on the Go side under ID until
// ImportCredentials or CancelImport, or ExpiresAt, whichever comes first.
type ImportPreview struct {
	// Chosen is false when the person cancelled the file dialog.
	Chosen bool   `json:"chosen"`
	ID     string `json:"id"`
	Format string `json:"format" enum:"ImportFormat"`
	// Source is the file's name ("" for pasted text).
	Source    string        `json:"source"`
	ExpiresAt string        `json:"expiresAt"`
	Entries   []ImportEntry `json:"entries"`
	// Importable counts the entries without a problem.
	Importable int `json:"importable"`
}

// ImportEntry is one value found, described without it.
type ImportEntry struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Field is the custom field of an item the value comes from ("" for a
	// login's password and for .env lines).
	Field    string `json:"field"`
	Username string `json:"username"`
	// Host is the host the value seems meant for ("" when none can be
	// derived): a suggestion the person confirms.
	Host string `json:"host"`
	Line int    `json:"line"`
	// Kind is what the value looks like; Length its length in characters.
	Kind   string `json:"kind" enum:"ImportValueKind"`
	Length int    `json:"length"`
	// Problem says why it cannot be imported ("" when it can).
	Problem       string `json:"problem"`
	SuggestedName string `json:"suggestedName"`
	// Duplicate: a stored credential already has the suggested name.
	Duplicate bool `json:"duplicate"`
}

// ImportChoice is one entry the person chose and the credential it
// becomes: the add-credential form, every field of it, but with its Secret
// left empty (the entry holds the value; a form that carries one is
// refused). An empty name takes the entry's suggested one.
type ImportChoice struct {
	Index int               `json:"index"`
	Form  NewCredentialForm `json:"form"`
}

// ImportResult is what an import did: the credentials added and the
// entries that failed, with why (never a value).
type ImportResult struct {
	Added  []ImportAdded  `json:"added"`
	Failed []ImportFailed `json:"failed"`
}

// ImportAdded is a credential an import added. Note says what did not go
// as asked (who answers for it could not be recorded), or is "".
type ImportAdded struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	Note  string `json:"note"`
}

// ImportFailed is a chosen entry that did not become a credential.
type ImportFailed struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func importPreview(id string, until time.Time, source string, src *credimport.Source, taken map[string]bool) ImportPreview {
	p := ImportPreview{Chosen: true, ID: id, Format: string(src.Format), Source: source,
		ExpiresAt: until.UTC().Format(time.RFC3339), Entries: make([]ImportEntry, 0, len(src.Entries))}
	for i := range src.Entries {
		e := &src.Entries[i]
		name := e.SuggestedName()
		p.Entries = append(p.Entries, ImportEntry{
			Index: i, Name: e.Name, Field: e.Field, Username: e.Username, Host: e.Host, Line: e.Line,
			Kind: string(e.Kind), Length: e.Length, Problem: sentence(e.Problem), SuggestedName: name,
			Duplicate: name != "" && taken[strings.ToLower(name)],
		})
		if e.Importable() {
			p.Importable++
		}
	}
	return p
}
