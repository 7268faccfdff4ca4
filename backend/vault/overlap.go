package vault

import (
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Overlap is a stored credential whose bindings cover some of the same
// requests as a candidate's: a duplicate (the same hosts and paths) or an
// overlap (at least one request both match). Example is one such request,
// and Winner says which credential an agent's call to it would use today,
// with the same rule Credentials.For applies.
type Overlap struct {
	// Other is the stored credential the candidate overlaps.
	Other CredentialView
	// Duplicate: the same hosts and the same path prefixes.
	Duplicate bool
	// Host and Path are a host pattern and a path prefix both cover, as the
	// candidate spells them.
	Host, Path string
	// Example is a request URL both match.
	Example string
	// Winner is who a call to Example would use: WinnerCandidate,
	// WinnerOther, WinnerThird (a third credential binds it more
	// specifically) or WinnerNone (two are equally specific, so the call is
	// refused until one is narrowed).
	Winner Winner
	// WinnerName names the third credential when Winner is WinnerThird.
	WinnerName string
}

// Winner says which credential Credentials.For picks for an overlap's example.
type Winner string

const (
	WinnerCandidate Winner = "candidate"
	WinnerOther     Winner = "other"
	WinnerThird     Winner = "third"
	WinnerNone      Winner = "none"
)

// candidateID stands for the credential being checked, which has no id yet.
const candidateID = "\x00candidate"

// CheckBindings reports the stored credentials (except the one with id
// except, the credential being edited) whose bindings overlap hosts and
// paths. Hosts and paths that do not parse are skipped: saving reports them.
// The result is sorted by name. It reads only what was decrypted at unlock.
//
// Errors: ErrLocked.
func (v *Credentials) CheckBindings(hosts, paths []string, except string) ([]Overlap, error) {
	cand := cachedCredential{view: CredentialView{ID: candidateID}}
	for _, h := range hosts {
		if p, err := ParseHostPattern(strings.TrimSpace(h)); err == nil {
			cand.hosts = append(cand.hosts, p)
		}
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	for _, p := range paths {
		if p, err := ParsePathPrefix(strings.TrimSpace(p)); err == nil {
			cand.view.PathPrefixes = append(cand.view.PathPrefixes, p)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.usable(); err != nil {
		return nil, err
	}
	all := make(map[string]cachedCredential, len(v.creds)+1)
	for id, c := range v.creds {
		if id != except {
			all[id] = c
		}
	}
	all[candidateID] = cand
	out := []Overlap{}
	for id, other := range all {
		if id == candidateID {
			continue
		}
		o, ok := overlapOf(cand, other)
		if !ok {
			continue
		}
		o.Winner, o.WinnerName = winnerFor(all, o, id)
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Other.Name != out[j].Other.Name {
			return out[i].Other.Name < out[j].Other.Name
		}
		return out[i].Other.ID < out[j].Other.ID
	})
	return out, nil
}

// overlapOf finds the first host and path both credentials cover.
func overlapOf(cand, other cachedCredential) (Overlap, bool) {
	for _, hp := range cand.hosts {
		for _, ho := range other.hosts {
			host, port, ok := commonHost(hp, ho)
			if !ok {
				continue
			}
			for _, pp := range cand.view.PathPrefixes {
				for _, po := range other.view.PathPrefixes {
					path, ok := commonPath(pp, po)
					if !ok {
						continue
					}
					return Overlap{
						Other: other.view, Host: hp.String(), Path: pp,
						Duplicate: samePatterns(cand.hosts, other.hosts) && sameSet(cand.view.PathPrefixes, other.view.PathPrefixes),
						Example:   exampleURL(host, port, path),
					}, true
				}
			}
		}
	}
	return Overlap{}, false
}

// commonHost is a host and port both patterns match, if any: the host as
// bindingHost spells it.
func commonHost(a, b HostPattern) (string, int, bool) {
	port, ok := commonPort(a.Port, b.Port)
	if !ok {
		return "", 0, false
	}
	switch {
	case !a.Wildcard && !b.Wildcard:
		return a.Host, port, a.Host == b.Host
	case a.Wildcard && b.Wildcard:
		return "any." + a.Host, port, a.Host == b.Host
	case a.Wildcard:
		_, rest, found := strings.Cut(b.Host, ".")
		return b.Host, port, found && rest == a.Host && !strings.HasPrefix(b.Host, "[")
	default:
		_, rest, found := strings.Cut(a.Host, ".")
		return a.Host, port, found && rest == b.Host && !strings.HasPrefix(a.Host, "[")
	}
}

// commonPort: a pattern without a port matches 443 and 80; one with a port
// only that port.
func commonPort(a, b int) (int, bool) {
	switch {
	case a == 0 && b == 0:
		return 443, true
	case a == 0:
		return b, b == 443 || b == 80
	case b == 0:
		return a, a == 443 || a == 80
	}
	return a, a == b
}

// commonPath is a path both prefixes cover: the longer one, when the
// shorter covers it.
func commonPath(a, b string) (string, bool) {
	if len(a) < len(b) {
		a, b = b, a
	}
	return a, pathMatch(b, a)
}

func samePatterns(a, b []HostPattern) bool {
	x := make([]string, len(a))
	for i, p := range a {
		x[i] = p.String()
	}
	y := make([]string, len(b))
	for i, p := range b {
		y[i] = p.String()
	}
	return sameSet(x, y)
}

func exampleURL(host string, port int, path string) string {
	u := url.URL{Scheme: "https", Host: host, Path: path}
	switch port {
	case 443:
	case 80:
		u.Scheme = "http"
	default:
		u.Host = host + ":" + strconv.Itoa(port)
	}
	return u.String()
}

// winnerFor applies Credentials.For's rule to the overlap's example.
func winnerFor(all map[string]cachedCredential, o Overlap, otherID string) (Winner, string) {
	u, err := url.Parse(o.Example)
	if err != nil {
		return WinnerNone, ""
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	best, err := pickCredential(all, host, port, u.EscapedPath())
	switch {
	case errors.Is(err, ErrAmbiguousCredential), err != nil:
		return WinnerNone, ""
	case best.ID == candidateID:
		return WinnerCandidate, ""
	case best.ID == otherID:
		return WinnerOther, ""
	}
	return WinnerThird, best.Name
}
