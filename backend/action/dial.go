package action

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it. Tests
// pass their own to play DNS tricks.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

type policyKey struct{}

// dialer resolves once, checks every address, and dials a checked IP.
type dialer struct {
	resolver Resolver
	timeout  time.Duration
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	p, ok := ctx.Value(policyKey{}).(policy)
	if !ok {
		return nil, errors.New("action: dial without a policy") // a bug, never the agent's doing
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: bad address", ErrInvalidRequest)
	}
	if err := checkName(host); err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if addrs, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, fmt.Errorf("%w: cannot resolve %s", ErrTransport, host)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s has no address", ErrTransport, host)
	}
	// Every address must pass: a name that answers with one public and one
	// metadata address is an attack, not a choice to make quietly.
	for _, a := range addrs {
		if err := p.check(a); err != nil {
			return nil, err
		}
	}
	var lastErr error
	for _, a := range addrs {
		checked := embedded(a)
		nd := &net.Dialer{Timeout: d.timeout, Control: verifyDialed(checked)}
		c, err := nd.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// verifyDialed checks, at connect time, that the socket goes to the
// address that was checked: a last guard against any path that would
// resolve again.
func verifyDialed(want netip.Addr) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || embedded(ap.Addr()) != want {
			return fmt.Errorf("%w: dialing %s, checked %s", ErrForbiddenTarget, address, want)
		}
		return nil
	}
}
