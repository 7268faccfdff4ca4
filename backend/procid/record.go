package procid

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Errors callers branch on. Matches and Origin wrap them with context.
var (
	// ErrForeignUser: the peer runs as another user; refuse the connection.
	ErrForeignUser = errors.New("procid: peer belongs to another user")
	// ErrNoOrigin: no ancestor of the shim other than the shim itself.
	ErrNoOrigin = errors.New("procid: no origin process above the shim")
	// ErrProcessGone: the recorded process has exited.
	ErrProcessGone = errors.New("procid: process has exited")
	// ErrPIDReused: the pid now belongs to a different process.
	ErrPIDReused = errors.New("procid: pid belongs to another process now")
	// ErrExeChanged: the process now runs another executable (execve).
	ErrExeChanged = errors.New("procid: process runs a different executable")
	// ErrCmdLineChanged: the process runs the same executable with another
	// command line: an exec of the same interpreter with another program
	// (`exec node other.js`), or the process rewrote its own argv.
	ErrCmdLineChanged = errors.New("procid: process runs another command line")
	// ErrExeChangedOnDisk: the file at the recorded path is no longer the
	// one the process started from (replaced, upgraded or modified).
	ErrExeChangedOnDisk = errors.New("procid: executable changed on disk")
	// ErrPeerChanged: the shim vanished or changed while it was inspected,
	// so the walk cannot be trusted.
	ErrPeerChanged = errors.New("procid: peer process changed during inspection")
)

// Signer values when the OS offers no verified signer.
const (
	SignerUnsigned   = "unsigned"
	SignerNotChecked = "signature not checked"
)

// FileID names one version of one executable file. Dev and Ino name the
// file object; Size, Mtime and Ctime change when its content is rewritten in
// place. Ctime matters because a process of the same user can set mtime
// back with utimensat, but cannot choose ctime: any write or attribute
// change moves it to "now".
type FileID struct {
	Dev, Ino uint64
	Size     int64
	MtimeNS  int64
	CtimeNS  int64
}

// sameFile reports whether a and b are the same file object, whatever its
// content.
func (a FileID) sameFile(b FileID) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// LaunchNonce is created by the gateway after it inspected a process. It is
// not a secret but it must be unguessable and never restored from outside.
type LaunchNonce [16]byte

func (n LaunchNonce) String() string { return hex.EncodeToString(n[:]) }

func newLaunchNonce() LaunchNonce {
	var n LaunchNonce
	if _, err := rand.Read(n[:]); err != nil {
		panic("procid: crypto/rand failed: " + err.Error()) // never on supported OSes
	}
	return n
}

// Ancestor is one link of the parent chain, for display only.
type Ancestor struct {
	PID  int
	Name string
}

// Stdio says who holds the other ends of the shim's stdin and stdout: the
// process that writes requests into the shim is the one that acts, whoever
// started it.
type Stdio string

const (
	// StdioHeld: the origin started the shim (itself, or through wrappers
	// that handed their own stdin and stdout on) and holds the other ends.
	StdioHeld Stdio = "held"
	// StdioHeldNotParent: the origin holds the other ends but did not
	// start the shim: another program started it on pipes this process
	// holds (the poser of issue 9, item 6).
	StdioHeldNotParent Stdio = "held-not-parent"
	// StdioNotHeld: no single process of this user holds the other ends
	// (or they are a terminal, a file, /dev/null). After Identify the shim
	// is then its own origin.
	StdioNotHeld Stdio = "not-held"
	// StdioNotChecked: this OS (or kernel) offers no way to check here;
	// the origin is the process that started the shim.
	StdioNotChecked Stdio = "not-checked"
	// StdioOtherNetns: the shim's stdin and stdout are sockets of another
	// network namespace (the agent runs in a container or sandbox), where
	// the kernel does not tell Yett who holds their other ends. As with
	// StdioNotHeld the shim is its own origin after Identify: an approval
	// lasts as long as this one `yett mcp` runs; the cards name the
	// process that started it, and say why Yett cannot confirm more.
	StdioOtherNetns Stdio = "other-netns"
)

// ProcessFacts describe a process for display: sanitized, what looks like
// a secret in CmdLine hidden, no authority.
type ProcessFacts struct {
	PID       int
	Name      string
	StartTime time.Time
	CmdLine   string
}

// RunRecord is one run of one origin process as the gateway inspected it.
// A record from Origin or Identify keeps the process open (Linux: a pidfd
// and /proc handles) so Matches is cheap; Close releases them.
type RunRecord struct {
	PID int
	// StartTime is when the kernel started the process, for display and
	// audit. Comparisons use StartKey, the kernel's own value, exactly.
	StartTime time.Time
	// StartKey is the kernel's start stamp in its own units (Linux: clock
	// ticks since boot; macOS: microseconds; Windows: 100 ns FILETIME).
	StartKey uint64
	// ExePath is the path of the running executable (display, and what
	// Matches re-checks on disk).
	ExePath string
	ExeID   FileID
	// ExeSHA256 is the hash of the file the process actually runs.
	ExeSHA256 [32]byte
	// CmdLineSHA256 is the hash of the command line exactly as the kernel
	// reported it. An exec of the same interpreter keeps pid, start time
	// and executable; the arguments tell the new program apart. A process
	// can rewrite its own argv, so this is a tripwire, not a proof.
	CmdLineSHA256 [32]byte
	// Signer is the code signer or requirement, SignerUnsigned or
	// SignerNotChecked.
	Signer string
	PPID   int
	// Parents runs from the origin's parent upwards, for display.
	Parents []Ancestor
	// Name and CmdLine are for display: truncated and sanitized.
	Name    string
	CmdLine string
	// ShimPID is the connected shim the origin was found from, and
	// ShimExeSHA256 the hash of the executable it runs: the gateway can
	// insist that the peer is a genuine `yett mcp`, not any program of the
	// user's that dialed the socket itself.
	ShimPID       int
	ShimExePath   string
	ShimExeSHA256 [32]byte
	ShimStartTime time.Time
	// ShimParent is the process that started the shim (its parent when it
	// connected), shown apart from the origin: a program can exec the
	// genuine shim so that its parent is the agent while another process
	// holds its stdio.
	ShimParent ProcessFacts
	// Stdio says whether the origin holds the shim's stdin and stdout.
	Stdio       Stdio
	LaunchNonce LaunchNonce
	InspectedAt time.Time

	live *liveProc
}

// Close releases what the record keeps open. Copies of a record share it;
// Matches on a closed record still works, only slower.
func (r *RunRecord) Close() error {
	if r == nil || r.live == nil {
		return nil
	}
	r.live.close()
	return nil
}

// ExeHash returns the executable hash as "sha256:<hex>".
func (r *RunRecord) ExeHash() string { return hashString(r.ExeSHA256) }

func hashString(sum [32]byte) string { return "sha256:" + hex.EncodeToString(sum[:]) }

func (r *RunRecord) String() string {
	return fmt.Sprintf("pid %d %s (%s, %s)", r.PID, r.Name, r.Signer, r.ExeHash()[:19])
}

// Display limits: enough to recognise a program, not enough to flood an
// approval card.
const (
	maxCmdLine = 512
	maxName    = 64
)

// sanitize makes untrusted process text safe to show: control and
// formatting characters (including bidi overrides) become '?', and the
// result is cut to max runes with an ellipsis.
func sanitize(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if r == unicode.ReplacementChar || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// displayCmdLine joins argv for display; arguments with spaces are quoted.
func displayCmdLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t") {
			a = fmt.Sprintf("%q", a)
		}
		parts[i] = a
	}
	return sanitize(strings.Join(parts, " "), maxCmdLine)
}
