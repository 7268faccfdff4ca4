// Package credimport reads the credentials people already keep elsewhere
// (a .env file or pasted KEY=value lines, a Bitwarden export in JSON or
// CSV, a 1Password 8 CSV export) so that the ones the person chooses can
// become Yett credentials.
//
// # What it guarantees
//
//   - A value is a vault.Secret from the moment it is read. Nothing else
//     this package returns (names, fields, user names, suggested hosts,
//     per-entry problems, errors) quotes a value, and a line that cannot
//     be read is named by its number only: it may be a bare secret.
//   - It reads bytes handed to it and never writes anything; the caller
//     opens the file read-only.
//   - Inputs are capped (MaxInput, MaxEntries), encrypted exports are
//     refused with ErrEncrypted, and every entry that cannot become a
//     credential says why in Problem.
//
// CSV and JSON values pass through Go strings on their way to a Secret
// (encoding/csv and encoding/json produce them), which the garbage
// collector frees but nothing can clear, as a secret typed into the
// window does on its way in. The .env reader works on bytes it wipes.
//
// # Formats
//
// Read recognises the format from the content, not the file's name:
// Bitwarden's unencrypted JSON export, Bitwarden's CSV export and
// 1Password 8's CSV export by their shape and header, and anything else
// as .env lines.
package credimport

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/vault"
)

// Format names what an input was read as.
type Format string

const (
	FormatEnv            Format = "env"
	FormatBitwardenJSON  Format = "bitwarden-json"
	FormatBitwardenCSV   Format = "bitwarden-csv"
	FormatOnePasswordCSV Format = "1password-csv"
)

// Formats lists every Format.
var Formats = []Format{FormatEnv, FormatBitwardenJSON, FormatBitwardenCSV, FormatOnePasswordCSV}

// Kind is what a value looks like, the most the person is told about it
// besides its length.
type Kind string

const (
	KindText   Kind = "text"
	KindURL    Kind = "url"
	KindNumber Kind = "number"
	KindFlag   Kind = "flag" // true, false, yes, no, on, off
	KindEmpty  Kind = "empty"
	// KindUnknown: the value was not read (a problem stopped the reading).
	KindUnknown Kind = "unknown"
)

// Kinds lists every Kind.
var Kinds = []Kind{KindText, KindURL, KindNumber, KindFlag, KindEmpty, KindUnknown}

// Caps on what is read: an export of a few thousand items is well under
// them, and they bound the memory and the page a preview fills.
const (
	MaxInput   = 4 << 20
	MaxEntries = 5000
)

// Errors of Read; their texts are written for a person and never quote the
// input.
var (
	ErrTooLarge   = fmt.Errorf("it is larger than %d MiB, more than an export of credentials needs", MaxInput>>20)
	ErrTooMany    = fmt.Errorf("it holds more than %d entries; split it and import the parts", MaxEntries)
	ErrNotText    = errors.New("it is not text (UTF-8): Yett reads .env files and Bitwarden or 1Password exports in CSV or JSON")
	ErrEmpty      = errors.New("there is nothing in it to import")
	ErrEncrypted  = errors.New("it is an encrypted Bitwarden export, which Yett cannot open: export again choosing the .json or .csv file format without a password, import it, then delete that file")
	ErrOnePUX     = errors.New("it is a 1Password .1pux archive: export again choosing CSV (File > Export in 1Password 8)")
	ErrUnreadable = errors.New("it cannot be read")
)

// LineError is an input that cannot be read at all, with where it stopped
// and why: one of the fixed reasons below, so it never quotes the input.
// It matches ErrUnreadable.
type LineError struct {
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d)", e.Reason, e.Line)
	}
	return e.Reason
}

const (
	reasonNotObject    = "it is not a JSON object, so not a Bitwarden export"
	reasonNotJSON      = "it is not valid JSON"
	reasonNotExport    = "it is not valid JSON, or not a Bitwarden export"
	reasonTrailing     = "something follows the JSON object"
	reasonNoItems      = "it is JSON without Bitwarden's \"items\", so not a Bitwarden export"
	reasonItemsNotList = "its \"items\" is not a list"
	reasonBadItem      = "an item is not what Bitwarden writes"
	reasonItemsOpen    = "its \"items\" list is not closed"
	reasonBadQuote     = "a quoted field is not closed or a quote is misplaced, so it is not valid CSV"
	reasonNotCSV       = "it is not valid CSV"
)

var lineReasons = []string{reasonNotObject, reasonNotJSON, reasonNotExport, reasonTrailing, reasonNoItems,
	reasonItemsNotList, reasonBadItem, reasonItemsOpen, reasonBadQuote, reasonNotCSV}

func (e *LineError) Is(target error) bool { return target == ErrUnreadable }

// Entry is one value found in the input. Only Secret holds the value.
type Entry struct {
	// Name is the .env key or the item's title; "" when the line could not
	// be read far enough to name it without quoting what may be a secret.
	Name string
	// Field is the custom field an item's value comes from; "" for a
	// login's password and for .env lines.
	Field string
	// Username is a login's user name (shown by every password manager,
	// and by Yett for a basic-auth credential); "" for .env lines.
	Username string
	// Host is a host the value seems meant for (an item's website, a .env
	// sibling's URL); "" when none can be derived. Only a suggestion: the
	// person confirms it.
	Host string
	// Line is where the entry starts in the input, counting from 1.
	Line int
	Kind Kind
	// Length is the value's length in characters.
	Length int
	// Problem says why the entry cannot become a credential; "" when it
	// can.
	Problem string
	Secret  vault.Secret
}

// Importable says whether the entry can become a credential.
func (e *Entry) Importable() bool { return e.Problem == "" }

// maxName is the longest credential name the vault takes, in characters.
const maxName = 100

// SuggestedName is the credential name the entry suggests: its name, and
// the field's when the value comes from one, cut to what the vault takes.
func (e *Entry) SuggestedName() string {
	n := e.Name
	if e.Field != "" {
		n = strings.TrimSpace(n + " " + e.Field)
	}
	if utf8.RuneCountInString(n) > maxName {
		n = strings.TrimSpace(string([]rune(n)[:maxName]))
	}
	return n
}

// Source is what one input held.
type Source struct {
	Format  Format
	Entries []Entry
}

// Wipe clears every value.
func (s *Source) Wipe() {
	if s == nil {
		return
	}
	for i := range s.Entries {
		s.Entries[i].Secret.Wipe()
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Read finds what data is and reads its entries. data is not kept or
// changed; the caller wipes it. Errors are the ones above, LineError
// (ErrUnreadable) among them.
func Read(data []byte) (*Source, error) {
	if len(data) > MaxInput {
		return nil, ErrTooLarge
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil, ErrOnePUX
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, ErrNotText
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmpty
	}
	var (
		src *Source
		err error
	)
	switch {
	case bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")):
		src, err = readBitwardenJSON(data)
	default:
		header := firstLine(data)
		switch {
		case bitwardenHeader(header):
			src, err = readBitwardenCSV(data)
		case onePasswordHeader(header):
			src, err = readOnePasswordCSV(data)
		default:
			src, err = readEnv(data)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(src.Entries) == 0 {
		return nil, ErrEmpty
	}
	return src, nil
}

// firstLine is data's first line, lower-cased, for recognising a CSV
// header (a header names columns; it holds no value).
func firstLine(data []byte) string {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		data = data[:i]
	}
	if len(data) > 1024 {
		return ""
	}
	return strings.ToLower(string(data))
}

// kindOf says what a value looks like.
func kindOf(v []byte) Kind {
	s := string(bytes.TrimSpace(v))
	switch {
	case s == "":
		return KindEmpty
	case isFlag(s):
		return KindFlag
	case isNumber(s):
		return KindNumber
	case isURL(s):
		return KindURL
	}
	return KindText
}

func isFlag(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	return false
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digits, dots := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// isURL: a scheme (RFC 3986: a letter, then letters, digits, + - .) and
// "://".
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i < 1 {
		return false
	}
	for j, r := range s[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}

// hostOf is the host an item's website or a URL value names, as a host
// binding ("" when it names none Yett could bind: another scheme, an IP
// range, a typo). A website saved without a scheme is read as https.
func hostOf(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > 2048 {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return ""
	}
	h := u.Hostname()
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443" || u.Scheme == "http" && p == "80") {
		h += ":" + p
	}
	p, err := vault.ParseHostPattern(h)
	if err != nil || p.Wildcard {
		return ""
	}
	return p.String()
}

// cleanText makes a name, field or user name from an export safe to show:
// control and format characters (which could reorder or hide what the
// person reads) are dropped, spaces collapsed, and the length capped.
func cleanText(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError, unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > 4*max {
			break
		}
	}
	out := b.String()
	if utf8.RuneCountInString(out) > max {
		out = string([]rune(out)[:max])
	}
	return strings.TrimSpace(out)
}

// valueEntry fills in what an entry says about its value, and why the
// vault would refuse it.
func valueEntry(e Entry, v []byte) Entry {
	e.Kind = kindOf(v)
	e.Length = utf8.RuneCount(v)
	switch {
	case len(bytes.TrimSpace(v)) == 0:
		// Blanks alone are no secret (kindOf calls them empty too): a
		// password field holding a space is an item with no password.
		e.Problem = problemEmpty
	case len(v) > vault.MaxSecretLen:
		e.Problem = problemTooLong
	case bytes.ContainsAny(v, "\r\n"):
		e.Problem = problemLineBreak
	case bytes.IndexByte(v, 0) >= 0:
		e.Problem = problemNUL
	}
	if e.Problem == "" {
		e.Secret = vault.NewSecret(v)
	}
	return e
}
