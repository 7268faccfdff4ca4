package action

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it. Tests
// pass their own to play DNS tricks.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolve returns the addresses of v's host, each checked under p. A name
// is looked up once per request; every address it answers must pass: a
// name that answers with one public and one metadata address is an attack,
// not a choice to make quietly.
func (e *Executor) resolve(ctx context.Context, v *validated, p policy) ([]netip.Addr, error) {
	addrs := []netip.Addr{v.target.IP}
	if !v.target.IP.IsValid() {
		var err error
		if addrs, err = e.cfg.Resolver.LookupNetIP(ctx, "ip", v.target.Host); err != nil {
			return nil, fmt.Errorf("%w: cannot resolve %s", ErrTransport, v.target.Host)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%w: %s has no address", ErrTransport, v.target.Host)
		}
	}
	for i, a := range addrs {
		if err := p.check(a); err != nil {
			return nil, err
		}
		addrs[i] = a.WithZone("").Unmap()
	}
	return addrs, nil
}

// dialChecked returns a dial function that goes only to addrs (already
// checked) on port, whatever address the transport names: the transport
// never resolves, so the address checked is the address dialed.
//
// A closed connection drops what it has not sent yet (SO_LINGER 0, a
// reset): when a request is cancelled (the vault locked) the transport
// closes its connection, and megabytes of body queued in the kernel's send
// buffer must not reach the target afterwards.
func dialChecked(addrs []netip.Addr, port int, timeout time.Duration) func(ctx context.Context, network, _ string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var lastErr error
		for _, a := range addrs {
			nd := &net.Dialer{Timeout: timeout, Control: verifyDialed(a)}
			c, err := nd.DialContext(ctx, network, net.JoinHostPort(a.String(), strconv.Itoa(port)))
			if err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
				return c, nil
			}
			lastErr = err
		}
		return nil, lastErr
	}
}

// verifyDialed checks, at connect time, that the socket goes to the
// address that was checked: a last guard against any path that would
// resolve again.
func verifyDialed(want netip.Addr) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || ap.Addr().WithZone("").Unmap() != want {
			return fmt.Errorf("%w: dialing %s, checked %s", ErrForbiddenTarget, address, want)
		}
		return nil
	}
}

// GuardedDial returns a DialContext for clients Yett runs itself (an
// upstream MCP server's Streamable HTTP client): each dial resolves its
// host once and checks every address the way a credentialed request's are
// checked (metadata names and link-local or metadata addresses always
// refused; private and loopback addresses only with allowInternal, which
// the caller sets when the person named such a host), then dials only the
// checked addresses.
func (e *Executor) GuardedDial(allowInternal bool) func(ctx context.Context, network, address string) (net.Conn, error) {
	p := policy{allowInternal: allowInternal}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrInvalidRequest, address)
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%w: port %s", ErrInvalidRequest, portText)
		}
		if err := checkName(host); err != nil {
			return nil, err
		}
		addrs := []netip.Addr{}
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = append(addrs, a)
		} else if addrs, err = e.cfg.Resolver.LookupNetIP(ctx, "ip", host); err != nil || len(addrs) == 0 {
			return nil, fmt.Errorf("%w: cannot resolve %s", ErrTransport, host)
		}
		for i, a := range addrs {
			if err := p.check(a); err != nil {
				return nil, err
			}
			addrs[i] = a.WithZone("").Unmap()
		}
		return dialChecked(addrs, port, e.cfg.Timeout)(ctx, network, "")
	}
}

// NamesInternal reports whether a URL's host by itself names a private or
// loopback target (an IP literal in those ranges, or localhost): what a
// person's definition must say before GuardedDial may reach one.
func NamesInternal(host string) bool { return namesInternal(host) }
