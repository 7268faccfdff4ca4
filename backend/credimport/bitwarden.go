package credimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Bitwarden's exports, as its clients write them (bitwarden/clients,
// libs/tools/export/vault-export: individual-vault-export.service.ts and
// base-vault-export.service.ts, the 2025 clients):
//
//   - JSON: {"encrypted": false, "folders": […], "items": [{"type": 1,
//     "name", "notes", "fields": [{"name", "value", "type"}], "login":
//     {"uris": [{"uri"}], "username", "password", "totp"}}]}; an
//     organization's has "collections" where a person's has "folders".
//   - Encrypted JSON: "encrypted": true, with the account's key
//     ("encKeyValidation_DO_NOT_EDIT" and encrypted strings in the items)
//     or with a password ("passwordProtected": true and "data"). Refused.
//   - CSV: folder,favorite,type,name,notes,fields,reprompt,login_uri,
//     login_username,login_password,login_totp (an organization's starts
//     collections,type,…); type is login or note; fields holds one
//     "name: value" line per custom field; login_uri lists the websites
//     joined by commas.
//
// Item types: 1 login, 2 secure note, 3 card, 4 identity, 5 SSH key.
// Custom field types: 0 text, 1 hidden, 2 boolean, 3 linked; text and
// hidden fields hold values (an API key is often kept in one).
const (
	bwLogin    = 1
	bwNote     = 2
	bwCard     = 3
	bwIdentity = 4
	bwSSHKey   = 5
)

type bwItem struct {
	Type   int       `json:"type"`
	Name   string    `json:"name"`
	Fields []bwField `json:"fields"`
	Login  *struct {
		URIs []struct {
			URI string `json:"uri"`
		} `json:"uris"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"login"`
}

type bwField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  int    `json:"type"`
}

// lines counts the lines up to an offset, going forward only, so that
// numbering every item is one pass over the input.
type lines struct {
	data []byte
	off  int
	line int
}

func (l *lines) at(off int) int {
	if off > len(l.data) {
		off = len(l.data)
	}
	if off > l.off {
		l.line += bytes.Count(l.data[l.off:off], []byte("\n"))
		l.off = off
	}
	return l.line
}

func readBitwardenJSON(data []byte) (*Source, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	pos := &lines{data: data, line: 1}
	broken := func(reason string) error {
		return &LineError{Line: pos.at(int(dec.InputOffset())), Reason: reason}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, &LineError{Line: 1, Reason: reasonNotObject}
	}
	src := &Source{Format: FormatBitwardenJSON}
	encrypted, items := false, false
	fail := func(err error) (*Source, error) {
		src.Wipe()
		return nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return fail(broken(reasonNotJSON))
		}
		switch key {
		case "encrypted", "passwordProtected":
			var b bool
			if err := dec.Decode(&b); err != nil {
				return fail(broken(reasonNotExport))
			}
			encrypted = encrypted || b
		case "items":
			items = true
			if err := readBitwardenItems(dec, data, pos, src); err != nil {
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(broken(reasonNotJSON))
			}
			clear(skip)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return fail(broken(reasonNotJSON))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(broken(reasonTrailing))
	}
	switch {
	case encrypted:
		return fail(ErrEncrypted)
	case !items:
		return fail(&LineError{Reason: reasonNoItems})
	}
	return src, nil
}

func readBitwardenItems(dec *json.Decoder, data []byte, pos *lines, src *Source) error {
	tok, err := dec.Token()
	if tok == nil && err == nil {
		return nil // "items": null
	}
	if err != nil || tok != json.Delim('[') {
		return &LineError{Line: pos.at(int(dec.InputOffset())), Reason: reasonItemsNotList}
	}
	for dec.More() {
		line := pos.at(nextValue(data, int(dec.InputOffset())))
		var it bwItem
		if err := dec.Decode(&it); err != nil {
			return &LineError{Line: line, Reason: reasonBadItem}
		}
		src.Entries = append(src.Entries, bitwardenEntries(it, line)...)
		wipeItem(&it)
		if len(src.Entries) > MaxEntries {
			return ErrTooMany
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return &LineError{Line: pos.at(int(dec.InputOffset())), Reason: reasonItemsOpen}
	}
	return nil
}

// nextValue skips the blanks and comma after off: where the next list
// element starts.
func nextValue(data []byte, off int) int {
	for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// wipeItem drops the decoder's strings (they cannot be cleared, only let
// go of sooner).
func wipeItem(it *bwItem) {
	if it.Login != nil {
		it.Login.Password = ""
	}
	for i := range it.Fields {
		it.Fields[i].Value = ""
	}
}

func bitwardenEntries(it bwItem, line int) []Entry {
	name := cleanText(it.Name, maxName)
	var out []Entry
	host := ""
	if it.Login != nil {
		for _, u := range it.Login.URIs {
			if host = hostOf(u.URI); host != "" {
				break
			}
		}
	}
	if it.Type == bwLogin {
		e := Entry{Name: name, Line: line, Host: host, Kind: KindUnknown}
		pw := ""
		if it.Login != nil {
			e.Username = cleanText(it.Login.Username, 256)
			pw = it.Login.Password
		}
		if pw == "" {
			e.Problem = problemNoPassword
			out = append(out, e)
		} else {
			out = append(out, fromString(e, pw))
		}
	}
	for _, f := range it.Fields {
		if f.Type != 0 && f.Type != 1 {
			continue // a boolean or a link to another field: no value of its own
		}
		out = append(out, fromString(Entry{Name: name, Field: fieldName(f.Name), Line: line, Host: host}, f.Value))
	}
	if len(out) == 0 {
		out = append(out, Entry{Name: name, Line: line, Kind: KindUnknown, Problem: itemProblem(it.Type)})
	}
	return out
}

func itemProblem(t int) string {
	switch t {
	case bwNote:
		return problemNote
	case bwCard:
		return problemCard
	case bwIdentity:
		return problemIdentity
	case bwSSHKey:
		return problemSSHKey
	}
	return problemOtherItem
}

func fieldName(n string) string {
	if n = cleanText(n, 60); n == "" {
		return "custom field"
	}
	return n
}

// fromString reads a value decoded as a string; the copy made to read it
// is cleared.
func fromString(e Entry, v string) Entry {
	b := []byte(v)
	defer clear(b)
	return valueEntry(e, b)
}

func bitwardenHeader(header string) bool {
	h := headerNames(header)
	return h["type"] && h["name"] && h["login_password"]
}

func readBitwardenCSV(data []byte) (*Source, error) {
	t, err := readCSV(data)
	if err != nil {
		return nil, err
	}
	src := &Source{Format: FormatBitwardenCSV}
	for _, r := range t.rows {
		name := cleanText(t.get(r, "name"), maxName)
		host := ""
		for _, u := range strings.Split(t.get(r, "login_uri"), ",") {
			if host = hostOf(u); host != "" {
				break
			}
		}
		var out []Entry
		kind := strings.TrimSpace(t.get(r, "type"))
		if kind == "login" {
			e := Entry{Name: name, Line: r.line, Host: host, Username: cleanText(t.get(r, "login_username"), 256), Kind: KindUnknown}
			if pw := t.get(r, "login_password"); pw == "" {
				e.Problem = problemNoPassword
				out = append(out, e)
			} else {
				out = append(out, fromString(e, pw))
			}
		}
		out = append(out, csvFields(t.get(r, "fields"), name, host, r.line)...)
		if len(out) == 0 {
			p := problemOtherItem
			if kind == "note" {
				p = problemNote
			}
			out = append(out, Entry{Name: name, Line: r.line, Kind: KindUnknown, Problem: p})
		}
		src.Entries = append(src.Entries, out...)
		clear(r.fields)
		if len(src.Entries) > MaxEntries {
			src.Wipe()
			return nil, ErrTooMany
		}
	}
	return src, nil
}

// csvFields reads the "fields" column: one "name: value" line per custom
// field. A line without ": " is the rest of the value before it, which had
// a line break of its own; that value cannot be told apart, so it is
// refused rather than imported cut.
func csvFields(col, name, host string, line int) []Entry {
	if col == "" {
		return nil
	}
	var out []Entry
	for _, l := range strings.Split(col, "\n") {
		field, value, ok := strings.Cut(l, ": ")
		if !ok {
			if n := len(out); n > 0 {
				out[n-1].Secret.Wipe()
				out[n-1].Problem, out[n-1].Kind = problemFieldSplits, KindUnknown
			}
			continue
		}
		if value == "null" {
			continue // a boolean or linked field without a value of its own
		}
		out = append(out, fromString(Entry{Name: name, Field: fieldName(field), Line: line, Host: host}, value))
	}
	return out
}
