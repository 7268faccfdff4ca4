package target

import (
	"net/netip"
	"strings"
)

// PlainHTTPAllowed is Yett's one rule for where a URL that will carry a
// credential or a token may use plain http: a host that names this machine
// by its literal (a loopback IP address, or "localhost"), for a provider or
// an API running locally. Everything else must be https. Connection
// endpoints (oauth/providers), named operations (operation) and the
// window's forms (frontend/src/lib/urlRule.ts, checked against the same
// cases in urlrule_test.go) apply it. host is a URL's Hostname(): no port,
// no brackets.
func PlainHTTPAllowed(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}
