package sshaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/yettdev/yett/backend/action"
)

// Defaults.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 8 << 20
	DefaultConnectTimeout = 15 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxIdlePerHost = 4
	// endGrace is how long a command Yett ended (timeout, output cap) may
	// take to report how it died after its SIGHUP, before its session is
	// closed anyway. A vault lock does not wait.
	endGrace = time.Second
)

// ErrNotStarted is wrapped by every error that proves the command was not
// run: the exec request never left, or the host refused it.
var ErrNotStarted = errors.New("ssh: the command was not run")

// Causes, each wrapped together with ErrNotStarted (ErrTransport is not:
// the command may have run).
var (
	ErrNoPins         = errors.New("ssh: the host has no pinned host key")
	ErrUnreachable    = errors.New("ssh: the host could not be reached")
	ErrHandshake      = errors.New("ssh: the SSH handshake failed")
	ErrHostKeyChanged = errors.New("ssh: the host presented a host key that is not pinned")
	ErrAuth           = errors.New("ssh: the host refused Yett's key")
	ErrNoKey          = errors.New("ssh: the host's key could not be lent")
	ErrSession        = errors.New("ssh: the host refused a session")
	ErrExecRefused    = errors.New("ssh: the host refused to run the command")
	// ErrTransport: the connection broke after the exec request was sent;
	// the command may have run, part of it, or not at all.
	ErrTransport = errors.New("ssh: the connection broke after the command was sent")
)

// HostKeyError says which key the host presented instead of a pinned one.
type HostKeyError struct {
	Presented   Pin
	Fingerprint string
}

func (e *HostKeyError) Error() string {
	return "ssh: the host presented host key " + e.Fingerprint + ", which is not pinned"
}

func (e *HostKeyError) Unwrap() error { return ErrHostKeyChanged }

func notStarted(cause error) error { return fmt.Errorf("%w: %w", ErrNotStarted, cause) }

// Config tunes an Executor; zero fields take the defaults.
type Config struct {
	// MaxOutputBytes caps standard output and standard error together.
	MaxOutputBytes int64
	// ConnectTimeout bounds the dial, handshake and authentication.
	ConnectTimeout time.Duration
	// NoReuse closes each connection after its command.
	NoReuse        bool
	MaxIdlePerHost int
	IdleTimeout    time.Duration
}

// Host is where a command runs, as the person set it up.
type Host struct {
	// ID and Version name the host record: connections are reused only for
	// the same record at the same version, so any edit (a new pin, another
	// user) means new connections.
	ID      string
	Version uint64
	Address string
	Port    int
	User    string
	Pins    []Pin
}

func (h Host) addr() string { return net.JoinHostPort(h.Address, strconv.Itoa(h.Port)) }

// Recorder receives a session as it happens, for a recording.
type Recorder interface {
	Input(p []byte)  // standard input sent to the command
	Output(p []byte) // standard output and error, as kept
}

// Command is one command to run.
type Command struct {
	Line    string
	Stdin   []byte
	Timeout time.Duration // 0 means DefaultTimeout
	Record  Recorder      // nil for none
}

// Ending says why Yett ended a command itself.
type Ending string

const (
	EndedTimeout   Ending = "timeout"
	EndedOutputCap Ending = "output_cap"
	EndedCancelled Ending = "cancelled"
)

// Result is what a started command gave back.
type Result struct {
	Stdout, Stderr []byte
	// Truncated says the output reached the cap.
	Truncated bool
	// Exited says an exit status came back (ExitCode); Signal names the
	// signal that ended the command ("TERM"), when one did.
	Exited   bool
	ExitCode int
	Signal   string
	// Ended is set when Yett ended the command. HangupRefused says the
	// host refused to deliver its SIGHUP (OpenSSH refuses signals to the
	// commands of root logins): the session was closed, but the command may
	// run on until it writes output.
	Ended         Ending
	HangupRefused bool
	// HostKey is the fingerprint of the host key that was verified.
	HostKey  string
	Duration time.Duration
	Reused   bool
}

// Executor runs commands. Safe for concurrent use.
type Executor struct {
	cfg  Config
	pool *pool
}

// New returns an Executor.
func New(cfg Config) *Executor {
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxIdlePerHost <= 0 {
		cfg.MaxIdlePerHost = DefaultMaxIdlePerHost
	}
	return &Executor{cfg: cfg, pool: newPool(cfg.MaxIdlePerHost, cfg.IdleTimeout)}
}

// CloseIdle closes every idle connection; connections in use are not put
// back afterwards. The gateway calls it when the vault leaves an epoch.
func (e *Executor) CloseIdle() { e.pool.closeAll() }

// Exec runs cmd on h, authenticating with the key key lends (asked only
// when a new connection is made). ctx ends the command at once (SIGHUP,
// then the session and its connection are closed): a vault lock cancels it.
//
// Errors wrapping ErrNotStarted mean nothing ran; *HostKeyError is among
// them. ErrTransport comes with the partial Result: the command may have
// run. A command Yett ended (timeout, output cap, ctx) returns its Result
// with Ended set and a nil error.
func (e *Executor) Exec(ctx context.Context, h Host, key action.SecretSource, cmd Command) (*Result, error) {
	if len(h.Pins) == 0 {
		return nil, notStarted(ErrNoPins)
	}
	if cmd.Timeout <= 0 {
		cmd.Timeout = DefaultTimeout
	}
	c, err := e.conn(ctx, h, key)
	if err != nil {
		return nil, err
	}
	ch, reqs, err := c.client.OpenChannel("session", nil)
	if err != nil && c.reused {
		// An idle connection the host closed meanwhile: nothing was sent
		// on it, so a fresh one is as good.
		c.client.Close()
		if c, err = e.dial(ctx, h, key); err != nil {
			return nil, err
		}
		ch, reqs, err = c.client.OpenChannel("session", nil)
	}
	if err != nil {
		c.client.Close()
		if ctx.Err() != nil {
			return nil, notStarted(ctx.Err())
		}
		return nil, notStarted(ErrSession)
	}
	res, keep, err := e.run(ctx, ch, reqs, cmd, c)
	if keep && !e.cfg.NoReuse {
		e.pool.put(c)
	} else {
		c.client.Close()
	}
	return res, err
}

// conn returns an idle connection to h or dials one.
func (e *Executor) conn(ctx context.Context, h Host, key action.SecretSource) (*poolConn, error) {
	if !e.cfg.NoReuse {
		if c := e.pool.get(h); c != nil {
			return c, nil
		}
	}
	return e.dial(ctx, h, key)
}

// dial connects, checks the host key against the pins and authenticates.
func (e *Executor) dial(ctx context.Context, h Host, key action.SecretSource) (*poolConn, error) {
	gen := e.pool.generation()
	client, pin, err := connect(ctx, h, key, e.cfg.ConnectTimeout, h.Pins)
	if err != nil {
		return nil, err
	}
	return newPoolConn(client, h, pin.Fingerprint(), gen), nil
}

// connect dials h and completes the handshake. With pins, the host must
// present one of them; without (trust on first use, Probe), any key of a
// pinnable type is accepted and returned.
func connect(ctx context.Context, h Host, key action.SecretSource, timeout time.Duration, pins []Pin) (*xssh.Client, Pin, error) {
	if err := ctx.Err(); err != nil {
		return nil, Pin{}, notStarted(err)
	}
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, "tcp", h.addr())
	if err != nil {
		if ctx.Err() != nil {
			return nil, Pin{}, notStarted(ctx.Err())
		}
		return nil, Pin{}, notStarted(ErrUnreachable)
	}
	nc.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()

	var presented xssh.PublicKey
	var mismatch bool
	algos := HostKeyAlgorithms(pins)
	if len(pins) == 0 {
		algos = allPinnableAlgorithms()
	}
	var signer xssh.Signer
	var wipe func()
	var keyErr error
	cfg := &xssh.ClientConfig{
		User:              h.User,
		HostKeyAlgorithms: algos,
		ClientVersion:     "SSH-2.0-Yett",
		HostKeyCallback: func(_ string, _ net.Addr, k xssh.PublicKey) error {
			presented = k
			if len(pins) == 0 {
				_, err := PinOf(k)
				return err
			}
			for _, p := range pins {
				if p.matches(k) {
					return nil
				}
			}
			mismatch = true
			return ErrHostKeyChanged
		},
		Auth: []xssh.AuthMethod{xssh.PublicKeysCallback(func() ([]xssh.Signer, error) {
			// Asked once per connection, after the host key was checked:
			// a host that is not the pinned one never gets a signature.
			if signer == nil && keyErr == nil {
				keyErr = key.WithSecret(ctx, func(pem []byte) error {
					var err error
					signer, wipe, err = signerFrom(pem)
					return err
				})
			}
			if keyErr != nil {
				return nil, keyErr
			}
			return []xssh.Signer{signer}, nil
		})},
	}
	c, chans, reqs, err := xssh.NewClientConn(nc, h.addr(), cfg)
	if wipe != nil {
		wipe()
	}
	signer = nil
	if err != nil {
		nc.Close()
		switch {
		case ctx.Err() != nil:
			return nil, Pin{}, notStarted(ctx.Err())
		case mismatch:
			p, _ := PinOf(presented)
			if p.key == nil {
				p = Pin{key: presented}
			}
			return nil, Pin{}, notStarted(&HostKeyError{Presented: p, Fingerprint: xssh.FingerprintSHA256(presented)})
		case keyErr != nil:
			return nil, Pin{}, notStarted(ErrNoKey)
		case presented != nil && isAuthFailure(err):
			return nil, Pin{}, notStarted(ErrAuth)
		}
		return nil, Pin{}, notStarted(ErrHandshake)
	}
	nc.SetDeadline(time.Time{})
	pin, _ := PinOf(presented)
	return xssh.NewClient(c, chans, reqs), pin, nil
}

func isAuthFailure(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "unable to authenticate") ||
		strings.Contains(err.Error(), "no supported methods remain"))
}

func allPinnableAlgorithms() []string {
	return []string{xssh.KeyAlgoED25519, xssh.KeyAlgoECDSA256, xssh.KeyAlgoECDSA384, xssh.KeyAlgoECDSA521,
		xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256}
}

// Probe connects to h, accepts whatever host key of a pinnable type it
// presents, and authenticates with key. It returns that key only when
// authentication succeeded: trust on first use commits a pin only for a
// host that accepted Yett's key. Nothing is run.
func Probe(ctx context.Context, h Host, key action.SecretSource, timeout time.Duration) (Pin, error) {
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	client, pin, err := connect(ctx, h, key, timeout, nil)
	if err != nil {
		return Pin{}, err
	}
	client.Close()
	return pin, nil
}

// capture keeps standard output and error within one shared cap and tells
// full when it is reached; the rest is read and dropped, so the connection
// keeps flowing until the command is ended.
type capture struct {
	mu        sync.Mutex
	max       int64
	stdout    []byte
	stderr    []byte
	truncated bool
	rec       Recorder
	full      chan struct{}
}

type stream struct {
	c   *capture
	err bool
}

func (s stream) Write(p []byte) (int, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - int64(len(c.stdout)+len(c.stderr))
	keep := p
	if int64(len(keep)) > room {
		keep = keep[:max(room, 0)]
		if !c.truncated {
			c.truncated = true
			close(c.full)
		}
	}
	if s.err {
		c.stderr = append(c.stderr, keep...)
	} else {
		c.stdout = append(c.stdout, keep...)
	}
	if c.rec != nil && len(keep) > 0 {
		c.rec.Output(keep)
	}
	return len(p), nil
}

// exitMsg is an exit-status or exit-signal request (RFC 4254 §6.10).
type exitMsg struct {
	status   int
	signal   string
	exited   bool
	signaled bool
}

// run sends the exec request and sees the command through. keep says the
// connection may serve another command.
func (e *Executor) run(ctx context.Context, ch xssh.Channel, reqs <-chan *xssh.Request, cmd Command, c *poolConn) (*Result, bool, error) {
	defer ch.Close()
	exit := make(chan exitMsg, 1)
	go func() {
		var m exitMsg
		for r := range reqs {
			switch r.Type {
			case "exit-status":
				if len(r.Payload) >= 4 {
					m.status = int(uint32(r.Payload[0])<<24 | uint32(r.Payload[1])<<16 | uint32(r.Payload[2])<<8 | uint32(r.Payload[3]))
					m.exited = true
				}
			case "exit-signal":
				var sig struct {
					Signal     string
					CoreDumped bool
					Error      string
					Lang       string
				}
				if xssh.Unmarshal(r.Payload, &sig) == nil {
					m.signal, m.signaled = cleanSignal(sig.Signal), true
				}
			}
			if r.WantReply {
				r.Reply(false, nil)
			}
		}
		exit <- m
	}()
	if err := ctx.Err(); err != nil {
		return nil, false, notStarted(err)
	}
	start := time.Now()
	ok, err := ch.SendRequest("exec", true, xssh.Marshal(struct{ Command string }{cmd.Line}))
	if err != nil {
		// The request may have been written before the connection broke.
		return &Result{HostKey: c.hostKey, Reused: c.reused, Duration: time.Since(start)}, false, ErrTransport
	}
	if !ok {
		return nil, true, notStarted(ErrExecRefused)
	}
	out := &capture{max: e.cfg.MaxOutputBytes, rec: cmd.Record, full: make(chan struct{})}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); io.Copy(stream{c: out}, ch) }()
	go func() { defer readers.Done(); io.Copy(stream{c: out, err: true}, ch.Stderr()) }()
	go func() {
		if len(cmd.Stdin) > 0 {
			if cmd.Record != nil {
				cmd.Record.Input(cmd.Stdin)
			}
			ch.Write(cmd.Stdin)
		}
		ch.CloseWrite()
	}()
	outputDone := make(chan struct{})
	go func() { readers.Wait(); close(outputDone) }()

	timer := time.NewTimer(cmd.Timeout)
	defer timer.Stop()
	connGone := c.gone

	var m exitMsg
	var ended Ending
	var refused bool
	select {
	case m = <-exit:
	case <-ctx.Done():
		ended = EndedCancelled
	case <-timer.C:
		ended = EndedTimeout
	case <-out.full:
		ended = EndedOutputCap
	}
	if ended != "" {
		// Ask the command to stop, then close its session. A vault lock
		// does not wait for it to answer.
		refused = !hangup(ch)
		if ended != EndedCancelled {
			select {
			case m = <-exit:
			case <-time.After(endGrace):
			case <-connGone:
			}
		}
		ch.Close()
		c.client.Close()
	}
	// The output ends with the channel; a command that left a child holding
	// its output open does not keep the answer waiting past the close.
	select {
	case <-outputDone:
	case <-time.After(endGrace):
		ch.Close()
		<-outputDone
	}
	out.mu.Lock()
	res := &Result{
		Stdout: out.stdout, Stderr: out.stderr, Truncated: out.truncated, Ended: ended,
		Exited: m.exited, ExitCode: m.status, Signal: m.signal, HostKey: c.hostKey,
		Duration: time.Since(start), Reused: c.reused, HangupRefused: refused,
	}
	out.mu.Unlock()
	if ended != "" {
		return res, false, nil
	}
	if !m.exited && !m.signaled {
		// The channel closed without saying how the command ended: the
		// connection broke (or the host dropped the session).
		return res, false, ErrTransport
	}
	select {
	case <-connGone:
		return res, false, nil
	default:
	}
	return res, true, nil
}

// hangupWait bounds the wait for the host's answer to the SIGHUP request.
const hangupWait = 500 * time.Millisecond

// hangup asks the host to send SIGHUP to the command's process group and
// says whether it agreed. The answer is asked for (RFC 4254 does not
// require one) because OpenSSH refuses the request for root logins, and
// the person must be told when a command may still run.
func hangup(ch xssh.Channel) bool {
	done := make(chan bool, 1)
	go func() {
		ok, err := ch.SendRequest("signal", true, xssh.Marshal(struct{ Signal string }{"HUP"}))
		done <- ok && err == nil
	}()
	select {
	case ok := <-done:
		return ok
	case <-time.After(hangupWait):
		return false
	}
}

// cleanSignal keeps a signal name short and printable ("TERM").
func cleanSignal(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '@' || c == '.' || c >= 'a' && c <= 'z') {
			return "UNKNOWN"
		}
	}
	return s
}
