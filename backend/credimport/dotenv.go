package credimport

import (
	"bytes"
	"strings"
)

// How .env lines are read. dotenv implementations differ in the corners;
// where they do, this follows python-dotenv 1.x, whose rules are a shell's
// where it has one:
//
//   - a UTF-8 byte order mark is skipped; CRLF and lone CR end lines as LF
//     does; blank lines and lines starting with # are skipped;
//   - "export " before the name is allowed; the name is letters, digits,
//     _ . and - (Node's dotenv's [\w.-]); spaces around = are allowed;
//   - an unquoted value ends at a # that follows a space or tab (so
//     KEY=a#b keeps the #, as a shell does; Node's dotenv cuts it) and its
//     spaces at both ends are trimmed;
//   - in '…' a backslash escapes only \ and '; in "…" it escapes
//     \ ' " a b f n r t v (Node's dotenv only turns \n and \r into
//     breaks, which no secret in a header can hold anyway); other
//     backslashes stay; `…` is taken as written;
//   - a quoted value may span lines (refused here: a header cannot hold a
//     line break); only spaces and a # comment may follow its closing
//     quote;
//   - ${NAME} in an unquoted or "…" value is a reference that
//     python-dotenv and docker compose expand; Yett does not, so such a
//     value is refused rather than imported as other bytes than programs
//     see.
//
// When a name is set twice, the last line wins, as in a shell.
type envReader struct {
	text    []byte
	pos     int
	line    int
	entries []Entry
	// urlHosts: the host each URL-valued entry names, by entry index, for
	// suggesting a host to its siblings.
	urlHosts map[int]string
}

func readEnv(data []byte) (*Source, error) {
	r := &envReader{text: normalizeBreaks(data), urlHosts: map[int]string{}}
	defer clear(r.text)
	for r.pos < len(r.text) {
		r.line++
		r.readLine()
		if len(r.entries) > MaxEntries {
			(&Source{Entries: r.entries}).Wipe()
			return nil, ErrTooMany
		}
	}
	r.lastWins()
	r.suggestHosts()
	return &Source{Format: FormatEnv, Entries: r.entries}, nil
}

// normalizeBreaks copies data with every CRLF and lone CR turned into LF.
func normalizeBreaks(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\r' {
			if i+1 < len(data) && data[i+1] == '\n' {
				continue
			}
			c = '\n'
		}
		out = append(out, c)
	}
	return out
}

func (r *envReader) lineEnd(from int) int {
	if i := bytes.IndexByte(r.text[from:], '\n'); i >= 0 {
		return from + i
	}
	return len(r.text)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func trimBlank(b []byte) []byte { return bytes.TrimLeft(b, " \t") }

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

const maxKey = 256

// readLine reads the line at r.pos (and the lines a quoted value spans)
// and moves past it.
func (r *envReader) readLine() {
	end := r.lineEnd(r.pos)
	next := end + 1
	defer func() { r.pos = next }()
	rest := trimBlank(r.text[r.pos:end])
	if len(rest) == 0 || rest[0] == '#' {
		return
	}
	if after, ok := bytes.CutPrefix(rest, []byte("export")); ok && len(after) > 0 && isBlank(after[0]) {
		rest = trimBlank(after)
	}
	k := 0
	for k < len(rest) && isKeyByte(rest[k]) {
		k++
	}
	afterKey := trimBlank(rest[k:])
	if len(afterKey) == 0 || afterKey[0] != '=' {
		// No name then =: the line may be a bare secret, so it gets no name.
		r.add(Entry{Line: r.line, Kind: KindUnknown, Problem: problemNotKeyVal})
		return
	}
	if k == 0 || k > maxKey {
		r.add(Entry{Line: r.line, Kind: KindUnknown, Problem: problemBadKey})
		return
	}
	e := Entry{Name: string(rest[:k]), Line: r.line, Kind: KindUnknown}
	raw := afterKey[1:] // everything after =, to the end of the line
	value := trimBlank(raw)
	if len(value) == 0 || value[0] != '"' && value[0] != '\'' && value[0] != '`' {
		v := unquoted(raw)
		if hasReference(v) {
			e.Problem = problemReference
			r.add(e)
			return
		}
		r.addValue(e, v)
		return
	}
	open := end - len(value) // where the quote is in r.text
	closing := r.closingQuote(open)
	if closing < 0 {
		e.Problem = problemUnclosed
		r.add(e)
		return
	}
	closeEnd := r.lineEnd(closing)
	next = closeEnd + 1
	body := r.text[open+1 : closing]
	spanned := bytes.Count(body, []byte("\n"))
	tail := trimBlank(r.text[closing+1 : closeEnd])
	switch {
	case len(tail) > 0 && tail[0] != '#':
		e.Problem = problemAfter
	case spanned > 0:
		e.Problem = problemMultiLine
	case value[0] == '"' && hasReference(body):
		e.Problem = problemReference
	}
	r.line += spanned
	if e.Problem != "" {
		r.add(e)
		return
	}
	v := unescape(body, value[0])
	r.addValue(e, v)
	clear(v)
}

// closingQuote is where the quote opened at open closes (possibly lines
// later), or -1. A scan that finds no close ends the reading's quotes of
// that kind: any later line's opening quote would have closed it, so
// reading stays one pass over the input.
func (r *envReader) closingQuote(open int) int {
	q := r.text[open]
	for i := open + 1; i < len(r.text); i++ {
		switch {
		case r.text[i] == '\\' && q != '`':
			i++
		case r.text[i] == q:
			return i
		}
	}
	return -1
}

// unquoted is an unquoted value: up to a # that follows a space or tab
// (the blanks after = count), without the blanks at either end.
func unquoted(raw []byte) []byte {
	for i := 1; i < len(raw); i++ {
		if raw[i] == '#' && isBlank(raw[i-1]) {
			raw = raw[:i]
			break
		}
	}
	return bytes.Trim(raw, " \t")
}

// unescape decodes a quoted value's body into a new slice.
func unescape(body []byte, quote byte) []byte {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || quote == '`' || i+1 == len(body) {
			out = append(out, c)
			continue
		}
		n := body[i+1]
		if quote == '\'' {
			if n == '\\' || n == '\'' {
				out = append(out, n)
				i++
			} else {
				out = append(out, c)
			}
			continue
		}
		if d, ok := doubleEscapes[n]; ok {
			out = append(out, d)
			i++
		} else {
			out = append(out, c)
		}
	}
	return out
}

var doubleEscapes = map[byte]byte{
	'\\': '\\', '\'': '\'', '"': '"', 'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
}

// hasReference says whether v holds ${NAME}.
func hasReference(v []byte) bool {
	for {
		i := bytes.Index(v, []byte("${"))
		if i < 0 {
			return false
		}
		v = v[i+2:]
		j := 0
		for j < len(v) && (v[j] == '_' || v[j] >= 'a' && v[j] <= 'z' || v[j] >= 'A' && v[j] <= 'Z' || v[j] >= '0' && v[j] <= '9') {
			j++
		}
		if j > 0 && j < len(v) && v[j] == '}' {
			return true
		}
	}
}

func (r *envReader) add(e Entry) { r.entries = append(r.entries, e) }

func (r *envReader) addValue(e Entry, v []byte) {
	e = valueEntry(e, v)
	if e.Kind == KindURL {
		if h := urlHost(v); h != "" {
			r.urlHosts[len(r.entries)] = h
		}
	}
	r.add(e)
}

// urlHost is the host of a URL value, read without copying the rest of it
// (its user info, path or query may be secret) into a string.
func urlHost(v []byte) string {
	i := bytes.Index(v, []byte("://"))
	if i < 0 {
		return ""
	}
	scheme := strings.ToLower(string(v[:i]))
	if scheme != "https" && scheme != "http" {
		return ""
	}
	auth := v[i+3:]
	if j := bytes.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if j := bytes.LastIndexByte(auth, '@'); j >= 0 {
		auth = auth[j+1:]
	}
	return hostOf(scheme + "://" + string(auth))
}

// lastWins marks every line whose name a later line sets again.
func (r *envReader) lastWins() {
	last := map[string]int{}
	for i, e := range r.entries {
		if e.Name != "" {
			last[e.Name] = i
		}
	}
	for i := range r.entries {
		e := &r.entries[i]
		if j, ok := last[e.Name]; ok && j != i {
			e.Secret.Wipe()
			e.Problem = problemSetAgain(r.entries[j].Line)
			delete(r.urlHosts, i)
		}
	}
}

// suggestHosts gives each entry the host its siblings' URL names (JIRA_URL
// for JIRA_TOKEN: the same name up to the first _), when they name one;
// else the host of a well-known variable.
func (r *envReader) suggestHosts() {
	byPrefix := map[string]map[string]bool{}
	for i, h := range r.urlHosts {
		p := namePrefix(r.entries[i].Name)
		if p == "" {
			continue
		}
		if byPrefix[p] == nil {
			byPrefix[p] = map[string]bool{}
		}
		byPrefix[p][h] = true
	}
	for i := range r.entries {
		e := &r.entries[i]
		if !e.Importable() || e.Kind == KindURL {
			continue
		}
		if hosts := byPrefix[namePrefix(e.Name)]; len(hosts) == 1 {
			for h := range hosts {
				e.Host = h
			}
			continue
		}
		e.Host = wellKnownHosts[strings.ToUpper(e.Name)]
	}
}

func namePrefix(name string) string {
	if i := strings.IndexByte(name, '_'); i > 0 {
		return strings.ToUpper(name[:i])
	}
	return ""
}

// wellKnownHosts are the API hosts of variables whose names their own
// providers document. A suggestion only: the person confirms it.
var wellKnownHosts = map[string]string{
	"GITHUB_TOKEN":      "api.github.com",
	"GH_TOKEN":          "api.github.com",
	"OPENAI_API_KEY":    "api.openai.com",
	"ANTHROPIC_API_KEY": "api.anthropic.com",
	"GITLAB_TOKEN":      "gitlab.com",
	"HF_TOKEN":          "huggingface.co",
	"STRIPE_SECRET_KEY": "api.stripe.com",
	"STRIPE_API_KEY":    "api.stripe.com",
	"SLACK_BOT_TOKEN":   "slack.com",
	"NPM_TOKEN":         "registry.npmjs.org",
}
