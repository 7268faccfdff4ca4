package oauth

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/yettdev/yett/backend/oauth/providers"
	"github.com/yettdev/yett/backend/target"
)

// maxAPIHosts bounds the hosts one authorization names.
const maxAPIHosts = 32

// APIHosts are the hosts authorization id's tokens may be sent to: the API
// of the account it authorizes. A named operation is saved only for a URL
// on one of them, and the gateway checks the URL again before it lends the
// token: without this, an operation could send a GitHub token to
// https://collector.example/x. They are what the person declared at
// connection; else the preset's (GitHub: api.github.com and
// uploads.github.com); else, for a provider the person typed in, the hosts
// of its own issuer and token endpoint.
func (m *Custody) APIHosts(id string) ([]target.HostPattern, error) {
	r, err := loadRow(m.db, id)
	if err != nil {
		return nil, notFound(err)
	}
	return apiHostsOf(r), nil
}

func apiHostsOf(r *row) []target.HostPattern {
	var raw []string
	switch {
	case r.APIHosts != "":
		raw = strings.Fields(r.APIHosts)
	default:
		if p, ok := providers.Lookup(r.Provider); ok && len(p.APIHosts) > 0 {
			raw = p.APIHosts
		} else {
			for _, e := range []string{r.Issuer, r.TokenEndpoint} {
				if u, err := url.Parse(e); err == nil && u.Hostname() != "" {
					raw = append(raw, u.Hostname())
				}
			}
		}
	}
	var out []target.HostPattern
	for _, h := range raw {
		if p, err := target.ParseHostPattern(h); err == nil && !containsPattern(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func containsPattern(ps []target.HostPattern, p target.HostPattern) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// parseAPIHosts checks the hosts a person declared at connection.
func parseAPIHosts(in []string) (string, error) {
	if len(in) > maxAPIHosts {
		return "", fmt.Errorf("%w: at most %d API hosts", ErrInvalid, maxAPIHosts)
	}
	var out []target.HostPattern
	for _, h := range in {
		if strings.TrimSpace(h) == "" {
			continue
		}
		p, err := target.ParseHostPattern(h)
		if err != nil {
			return "", fmt.Errorf("%w: API host %q: %v", ErrInvalid, clipText(h, 80), err)
		}
		if !containsPattern(out, p) {
			out = append(out, p)
		}
	}
	s := make([]string, len(out))
	for i, p := range out {
		s[i] = string(p)
	}
	return strings.Join(s, " "), nil
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
