package presence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"
)

// ActionID is the polkit action Yett checks; its file is
// build/linux/dev.yett.approve.policy, installed to
// /usr/share/polkit-1/actions by the package.
const ActionID = "dev.yett.approve"

// systemBus is the system bus's socket. It is fixed (no environment
// variable is read): a bus an agent made would answer "authorized".
const systemBus = "/run/dbus/system_bus_socket"

const (
	polkitName      = "org.freedesktop.PolicyKit1"
	polkitPath      = dbus.ObjectPath("/org/freedesktop/PolicyKit1/Authority")
	polkitInterface = "org.freedesktop.PolicyKit1.Authority"
	// allowUserInteraction: polkit may ask the person through their
	// authentication agent.
	allowUserInteraction = uint32(1)
)

// Polkit verifies the person through polkit on the system bus.
type Polkit struct {
	// Socket is the system bus socket; "" is the system's own. Tests give
	// one of their own (internal/testsupport/polkittest).
	Socket string
	// Timeout bounds the calls that do not wait for the person.
	Timeout time.Duration
}

func (p *Polkit) socket() string {
	if p.Socket != "" {
		return p.Socket
	}
	return systemBus
}

func (p *Polkit) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 5 * time.Second
}

// dial connects to the system bus and checks it is one: the socket's
// listener was root (SO_PEERCRED), as the system's dbus-daemon is when it
// binds its socket; a bus another program of the user made is not.
func (p *Polkit) dial(ctx context.Context) (*dbus.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", p.socket())
	if err != nil {
		return nil, fmt.Errorf("%w: no system bus (%v)", ErrUnavailable, err)
	}
	uc := nc.(*net.UnixConn)
	raw, err := uc.SyscallConn()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var cred *unix.Ucred
	var credErr error
	raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if credErr != nil || cred.Uid != 0 {
		nc.Close()
		return nil, fmt.Errorf("%w: the system bus socket is not root's", ErrUnavailable)
	}
	conn, err := dbus.NewConn(nc, dbus.WithContext(ctx))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	timer := time.AfterFunc(p.timeout(), func() { conn.Close() })
	err = conn.Auth(nil)
	if err == nil {
		err = conn.Hello()
	}
	if !timer.Stop() || err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: the system bus did not answer", ErrUnavailable)
	}
	return conn, nil
}

// authority checks that polkit runs, as a user other than ours (polkitd
// runs as its own account; a program of ours cannot own a name on the
// system bus anyway, but a program of ours is exactly what must not answer).
func (p *Polkit) authority(ctx context.Context, conn *dbus.Conn) (dbus.BusObject, error) {
	cctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	var owner string
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.GetNameOwner", 0, polkitName).Store(&owner); err != nil {
		return nil, fmt.Errorf("%w: polkit is not running", ErrUnavailable)
	}
	var uid uint32
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.GetConnectionUnixUser", 0, owner).Store(&uid); err != nil ||
		int(uid) == os.Getuid() {
		return nil, fmt.Errorf("%w: polkit's bus name is held by this user", ErrUnavailable)
	}
	return conn.Object(owner, polkitPath), nil
}

func (p *Polkit) Available(ctx context.Context) (bool, string) {
	if os.Getuid() == 0 {
		return false, "Yett runs as root here, and polkit authorizes root without asking."
	}
	conn, err := p.dial(ctx)
	if err != nil {
		return false, "polkit cannot be reached on the system bus (install Debian's polkitd and a polkit authentication agent)."
	}
	defer conn.Close()
	if _, err := p.authority(ctx, conn); err != nil {
		return false, "polkit is not running (install Debian's polkitd and a polkit authentication agent)."
	}
	return true, ""
}

// Verify asks polkit whether this process may perform ActionID, letting
// it ask the person. polkit refuses a root subject nothing, so Verify
// refuses to run as root.
func (p *Polkit) Verify(ctx context.Context, r Request) (string, error) {
	if os.Getuid() == 0 {
		return "", fmt.Errorf("%w: Yett runs as root, and polkit authorizes root without asking", ErrUnavailable)
	}
	start, err := selfStartTime()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	conn, err := p.dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	obj, err := p.authority(ctx, conn)
	if err != nil {
		return "", err
	}
	subject := struct {
		Kind    string
		Details map[string]dbus.Variant
	}{"unix-process", map[string]dbus.Variant{
		"pid":        dbus.MakeVariant(uint32(os.Getpid())),
		"start-time": dbus.MakeVariant(start),
		"uid":        dbus.MakeVariant(int32(os.Getuid())),
	}}
	// No details: polkit takes them only from trusted callers (root, an
	// action owner). The prompt's text is the action's message; which card
	// it is for is Yett's own binding (the broker releases only the card it
	// asked about).
	details := map[string]string{}
	cancelID := newCancelID()
	var result struct {
		Authorized, Challenge bool
		Details               map[string]string
	}
	call := obj.GoWithContext(ctx, polkitInterface+".CheckAuthorization", 0, nil, subject, ActionID, details, allowUserInteraction, cancelID)
	select {
	case <-call.Done:
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), p.timeout())
		obj.CallWithContext(cctx, polkitInterface+".CancelCheckAuthorization", 0, cancelID)
		cancel()
		return "", ctx.Err()
	}
	if call.Err != nil {
		var de dbus.Error
		if errors.As(call.Err, &de) && strings.HasSuffix(de.Name, ".Cancelled") {
			return "", ErrNotVerified
		}
		name := "an error"
		if errors.As(call.Err, &de) {
			name = de.Name
		}
		return "", fmt.Errorf("%w: polkit refused the check (%s)", ErrUnavailable, name)
	}
	if err := dbus.Store(call.Body, &result); err != nil {
		return "", fmt.Errorf("%w: polkit's answer is malformed", ErrUnavailable)
	}
	switch {
	case result.Authorized:
		return "polkit: the password of " + accountName(), nil
	case result.Challenge:
		// Authentication was needed and no agent could ask.
		return "", fmt.Errorf("%w: no polkit authentication agent is running for this session", ErrUnavailable)
	}
	return "", ErrNotVerified
}

func accountName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
}

func newCancelID() string {
	var b [8]byte
	rand.Read(b[:])
	return "yett-" + hex.EncodeToString(b[:])
}

// selfStartTime is this process's start time in clock ticks since boot,
// field 22 of /proc/self/stat, as polkit names a unix-process subject.
func selfStartTime() (uint64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 {
		return 0, errors.New("malformed /proc/self/stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}
