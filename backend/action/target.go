package action

import (
	"fmt"
	"net/netip"
	"strings"
)

// alwaysRefused are addresses no request may reach: link-local (where
// cloud metadata services live), cloud metadata addresses outside it, and
// addresses that do not name one remote host.
var alwaysRefused = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // IPv4 link-local, AWS/GCP/Azure/OCI metadata
	netip.MustParsePrefix("fe80::/10"),          // IPv6 link-local
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6
	netip.MustParsePrefix("168.63.129.16/32"),   // Azure wire server
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network": 0.0.0.0 reaches localhost
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("224.0.0.0/4"), // multicast
	netip.MustParsePrefix("ff00::/8"),
	netip.MustParsePrefix("255.255.255.255/32"),
}

// refusedNames are metadata host names, refused before any lookup.
var refusedNames = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"instance-data": true, "instance-data.ec2.internal": true,
	"metadata.azure.internal": true, "metadata.platformequinix.com": true,
}

// internal are private and loopback ranges: reachable only when the
// credential binding names them.
var internal = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT, tailnets
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking, often internal
}

// nat64 embeds an IPv4 address in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// policy is what one request may dial.
type policy struct {
	allowInternal bool // a binding names a private/loopback target
	loopbackOnly  bool // plain HTTP with a credential
}

// embedded returns the IPv4 address an IPv6 address stands for (mapped or
// NAT64), so 169.254.169.254 cannot hide behind ::ffff: or 64:ff9b::.
func embedded(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return a
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// check reports whether addr may be dialed under p.
func (p policy) check(addr netip.Addr) error {
	a := embedded(addr.WithZone(""))
	if !a.IsValid() || inAny(a, alwaysRefused) || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
		return fmt.Errorf("%w: %s is a link-local, metadata or non-unicast address", ErrForbiddenTarget, a)
	}
	if p.loopbackOnly && !a.IsLoopback() {
		return fmt.Errorf("%w: plain HTTP with a credential reaches loopback only", ErrInsecureScheme)
	}
	if inAny(a, internal) && !p.allowInternal {
		return fmt.Errorf("%w: %s is private or loopback and no credential binding names it", ErrForbiddenTarget, a)
	}
	return nil
}

// checkName refuses metadata names before they are resolved.
func checkName(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if refusedNames[h] {
		return fmt.Errorf("%w: %s is a metadata service name", ErrForbiddenTarget, h)
	}
	return nil
}

// namesInternal reports whether the URL host by itself names a private or
// loopback target: an IP literal in those ranges, or localhost.
func namesInternal(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && inAny(embedded(a), internal)
}

// isLoopbackHost reports whether host certainly means this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && embedded(a).IsLoopback()
}
