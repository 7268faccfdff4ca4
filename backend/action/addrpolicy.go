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
	netip.MustParsePrefix("fec0::/10"),     // deprecated site-local, still routed inside some sites
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking, often internal
}

// policy is what one request may dial.
type policy struct {
	allowInternal bool // a binding names a private/loopback target
	loopbackOnly  bool // plain HTTP with a credential
}

// IPv6 ranges whose addresses stand for an IPv4 address (RFC 6052 NAT64,
// RFC 3056 6to4, RFC 4380 Teredo, RFC 4291 IPv4-compatible, RFC 2765
// SIIT).
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	compatible = netip.MustParsePrefix("::/96")
	siit       = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// embedded returns a (unmapped, without zone) and every IPv4 address it
// may stand for, so 169.254.169.254 cannot hide behind ::ffff:, ::,
// 64:ff9b::, 64:ff9b:1::, 2002:, Teredo, SIIT or an ISATAP interface ID.
// For the local-use NAT64 prefix the operator picks where the IPv4 address
// sits (RFC 6052 §2.2), so every placement is returned.
func embedded(a netip.Addr) []netip.Addr {
	a = a.WithZone("").Unmap()
	out := []netip.Addr{a}
	if !a.Is6() {
		return out
	}
	b := a.As16()
	v4 := func(i ...int) netip.Addr { return netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}) }
	switch {
	case nat64.Contains(a), siit.Contains(a):
		out = append(out, v4(12, 13, 14, 15))
	case nat64Local.Contains(a):
		// Prefix lengths /48, /56, /64 and /96; bits 64-71 are skipped.
		out = append(out, v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), v4(12, 13, 14, 15))
	case sixToFour.Contains(a):
		out = append(out, v4(2, 3, 4, 5))
	case teredo.Contains(a):
		out = append(out, v4(4, 5, 6, 7)) // the server
		out = append(out, netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}))
	case compatible.Contains(a) && a != netip.IPv6Loopback() && a != netip.IPv6Unspecified():
		out = append(out, v4(12, 13, 14, 15))
	}
	// ISATAP (RFC 5214): any prefix, interface ID [02]00:5efe:a.b.c.d.
	if (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		out = append(out, v4(12, 13, 14, 15))
	}
	return out
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func refused(a netip.Addr) bool {
	return !a.IsValid() || inAny(a, alwaysRefused) || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast()
}

// check reports whether addr may be dialed under p. A refusal holds if it
// holds for any address addr may stand for; loopback, which allows plain
// HTTP, must be the address itself (::127.0.0.1 leaves the machine).
func (p policy) check(addr netip.Addr) error {
	forms := embedded(addr)
	for _, a := range forms {
		if refused(a) {
			return fmt.Errorf("%w: %s is a link-local, metadata or non-unicast address", ErrForbiddenTarget, forms[0])
		}
	}
	if p.loopbackOnly && !forms[0].IsLoopback() {
		return fmt.Errorf("%w: plain HTTP with a credential reaches loopback only", ErrInsecureScheme)
	}
	for _, a := range forms {
		if inAny(a, internal) && !p.allowInternal {
			return fmt.Errorf("%w: %s is private or loopback and no credential binding names it", ErrForbiddenTarget, forms[0])
		}
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
	if err != nil {
		return false
	}
	for _, e := range embedded(a) {
		if inAny(e, internal) {
			return true
		}
	}
	return false
}

// isLoopbackHost reports whether host certainly means this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
