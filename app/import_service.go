package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/credimport"
	"github.com/yettdev/yett/backend/vault"
)

// Importing credentials from a .env file or a password manager's export.
// What was read stays on this side, under a single-use id, for
// importTTL at most; the page gets a preview that names the entries and
// never holds a value; a locked vault wipes what is held.

const (
	// importTTL bounds how long values read for the person to choose from
	// are kept before they are wiped: enough to choose from a long export.
	importTTL = 10 * time.Minute
	// importsHeld: one reading per window is the norm; a few more cover a
	// second window or a file chosen again, the oldest going first.
	importsHeld = 4
)

// ReadImportText reads pasted KEY=value lines (or an export's text) for
// the person to choose from. The text comes in once and nothing of it
// goes back but the preview, which holds no value.
func (s *VaultService) ReadImportText(text string) (ImportPreview, error) {
	b := []byte(text)
	defer wipe(b)
	return s.readImport(b, "")
}

// OpenImportFile asks which file to import from (a .env file, a
// Bitwarden export in JSON or CSV, a 1Password CSV export) and reads it
// for the person to choose from. The file is opened read-only and never
// changed; its bytes never reach the window. Chosen is false when the
// person cancels.
func (s *VaultService) OpenImportFile() (ImportPreview, error) {
	path, err := s.fileDialogs().openImport("Import credentials from a .env file or a Bitwarden or 1Password export")
	if err != nil {
		s.log.Error("import open dialog", "err", err)
		return ImportPreview{}, shown("Yett could not show the files to choose from.")
	}
	if path == "" {
		return ImportPreview{}, nil
	}
	data, err := readImportFile(path)
	defer wipe(data)
	if err != nil {
		return ImportPreview{}, s.importError(err)
	}
	return s.readImport(data, filepath.Base(path))
}

var errNotAFile = errors.New("it is not a file Yett can read")

// readImportFile reads a file the person chose, read-only. It refuses what
// is not a regular file before opening it (a FIFO would block the open)
// and reads no more than credimport takes.
func readImportFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errNotAFile
	}
	if fi.Size() > credimport.MaxInput {
		return nil, credimport.ErrTooLarge
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errNotAFile
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, credimport.MaxInput+1))
	if err != nil {
		wipe(data)
		return nil, errNotAFile
	}
	return data, nil
}

// readImport reads data and keeps what it held for ImportCredentials.
func (s *VaultService) readImport(data []byte, source string) (ImportPreview, error) {
	taken, err := s.credentialNames()
	if err != nil {
		return ImportPreview{}, err
	}
	src, err := credimport.Read(data)
	if err != nil {
		return ImportPreview{}, s.importError(err)
	}
	id, until := s.imports.Put(src)
	// The vault may have locked while this read: nothing stays held then.
	if s.vault.Status().State != vault.StateUnlocked {
		s.imports.Drop(id)
		return ImportPreview{}, s.publicError(vault.ErrLocked)
	}
	return importPreview(id, until, source, src, taken), nil
}

// credentialNames are the stored credentials' names, lower-cased.
func (s *VaultService) credentialNames() (map[string]bool, error) {
	list, err := s.vault.Credentials().List()
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make(map[string]bool, len(list))
	for _, c := range list {
		out[strings.ToLower(c.Name)] = true
	}
	return out, nil
}

// importError is the text a person reads when nothing could be read;
// credimport's errors never quote the input.
func (s *VaultService) importError(err error) error {
	for _, known := range []error{credimport.ErrTooLarge, credimport.ErrTooMany, credimport.ErrNotText, credimport.ErrEmpty,
		credimport.ErrEncrypted, credimport.ErrOnePUX, credimport.ErrUnreadable, errNotAFile} {
		if errors.Is(err, known) {
			return shown(sentence("Yett cannot import this: " + err.Error()))
		}
	}
	return s.publicError(err)
}

// ImportCredentials turns the chosen entries of the preview id into
// credentials, each as the add-credential form would (its hosts, paths,
// injection, approval, rotation reminder and who answers for it), and
// wipes every value read, chosen or not: id is used up. An entry that cannot be added is reported with why;
// a name a stored credential (or an entry added before it) already has is
// refused, so every name still names one credential.
func (s *VaultService) ImportCredentials(id string, choices []ImportChoice) (ImportResult, error) {
	if len(choices) == 0 {
		return ImportResult{}, shown("Choose at least one entry to import.")
	}
	src, ok := s.imports.Take(id)
	if !ok {
		return ImportResult{}, shown("This import has ended (it was used or cancelled, the vault locked, or " +
			fmt.Sprint(int(importTTL/time.Minute)) + " minutes passed) and what was read is wiped. Open the file or paste again.")
	}
	defer src.Wipe()
	taken, err := s.credentialNames()
	if err != nil {
		return ImportResult{}, err
	}
	res := ImportResult{Added: []ImportAdded{}, Failed: []ImportFailed{}}
	seen := map[int]bool{}
	for _, c := range choices {
		if c.Index < 0 || c.Index >= len(src.Entries) || seen[c.Index] {
			res.Failed = append(res.Failed, ImportFailed{Index: c.Index, Name: c.Form.Name, Reason: "No such entry, or it was chosen twice."})
			continue
		}
		seen[c.Index] = true
		added, failed := s.importOne(&src.Entries[c.Index], c, taken)
		if failed != nil {
			res.Failed = append(res.Failed, *failed)
			continue
		}
		res.Added = append(res.Added, *added)
	}
	return res, nil
}

func (s *VaultService) importOne(e *credimport.Entry, c ImportChoice, taken map[string]bool) (*ImportAdded, *ImportFailed) {
	form := c.Form
	if form.Name = strings.TrimSpace(form.Name); form.Name == "" {
		form.Name = e.SuggestedName()
	}
	fail := func(reason string) (*ImportAdded, *ImportFailed) {
		return nil, &ImportFailed{Index: c.Index, Name: form.Name, Reason: reason}
	}
	switch {
	case form.Secret != "":
		// The value is the entry's: a page that sends one is not what
		// this window does, and which of the two would be stored?
		return fail("The form carries a secret of its own; an import takes the entry's.")
	case !e.Importable():
		return fail(sentence(e.Problem))
	}
	if taken[strings.ToLower(form.Name)] {
		return fail("A credential named “" + form.Name + "” already exists: give this one another name.")
	}
	if form.Format == string(vault.InjectBasic) && strings.TrimSpace(form.Username) == "" {
		form.Username = e.Username
	}
	nc := form.toVault()
	nc.Secret = e.Secret // Add copies it into the sealed record; the source is wiped after
	cred, err := s.vault.Credentials().Add(nc)
	if err != nil {
		return fail(s.publicError(err).Error())
	}
	taken[strings.ToLower(cred.Name)] = true
	added := &ImportAdded{Index: c.Index, ID: cred.ID, Name: cred.Name}
	if err := s.inventory.declare(cred.ID, cred.Name, form.Owner, form.BackupRevoker, form.Environment); err != nil {
		added.Note = err.Error()
	}
	return added, nil
}

// CancelImport wipes what was read for the preview id; nothing is
// imported. Unknown or used ids are ignored.
func (s *VaultService) CancelImport(id string) {
	s.imports.Drop(id)
}
