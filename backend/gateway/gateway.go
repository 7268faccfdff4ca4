package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yettdev/yett/backend/action"
	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/procid"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
)

// File names inside the runtime and data directories.
const (
	SocketName = "gateway.sock"
	LockName   = "gateway.lock"
	AuditDir   = "audit"
)

// Address is where the gateway of runtime directory dir listens: its
// socket on Unix, its named pipe on Windows.
func Address(dir string) string { return address(dir) }

// Errors New returns.
var (
	ErrAlreadyRunning = errors.New("gateway: another gateway is running for this runtime directory")
	ErrConfig         = errors.New("gateway: incomplete configuration")
)

// Config is what a gateway needs. Vault, DataDir, RuntimeDir and Audit are
// required.
type Config struct {
	Vault      *vault.Vault
	DataDir    string // journal.db and journal.log
	RuntimeDir string // gateway.sock and gateway.lock
	// Audit is the open audit log the gateway writes to. The caller owns it
	// (backend/keeper, the one composition root), records the vault's lock
	// and unlock in it, and closes it after the gateway.
	Audit *audit.Log
	// BootID names this gateway start; "" makes a random one. The caller
	// chooses it when it records events of this start before the gateway
	// exists (the vault's unlock that starts it).
	BootID string
	// ResultDelay bounds how long the journal holds a call's outcome for
	// a group commit that another call leads (journal.Options.ResultDelay);
	// 0 means the journal's default. The audit log's own is set where it
	// is opened.
	ResultDelay time.Duration
	// ApprovalTimeout bounds every pending approval; 0 means 120 s.
	ApprovalTimeout time.Duration
	// ProgressEvery is how often a call waiting on a card tells its client
	// so (waitingNotice); 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
	HTTP          action.Config
	// SSH tunes the SSH executor (output cap, connection reuse).
	SSH sshaction.Config
	// Recordings keeps the session recordings of SSH hosts that ask for
	// them; without it, such hosts are refused (never served unrecorded).
	Recordings Recordings
	Logger     *slog.Logger
	// Inspector is shared with benchmarks; nil makes one.
	Inspector *procid.Inspector
	// ShimSHA256 lists the executables allowed on the other end of the
	// socket (the genuine `yett mcp`). A program that dials the socket
	// itself would otherwise make its parent the "origin" shown on the card.
	// Empty accepts any peer of the user (the card still names it).
	ShimSHA256 [][32]byte
	// Operations and OAuth, set together or not at all, serve the named
	// operations as tools: the catalogue lists and renders them, OAuth
	// custody checks their authorization and lends its token. The caller
	// owns both and closes them after the gateway.
	Operations *operation.Catalogue
	OAuth      Lender
	// Control is the owner inventory's word on whether a credential or
	// authorization may serve now; nil refuses nothing on its account.
	Control Control
	// Upstreams are the upstream MCP servers whose tools the gateway
	// lists and calls (*upstream.Manager); nil lists none. The caller owns
	// it and closes it after the gateway.
	Upstreams Upstreams
}

// Gateway is a running gateway. Start it with New, then Serve.
type Gateway struct {
	cfg      Config
	log      *slog.Logger
	vault    *vault.Vault
	journal  *journal.Journal
	audit    *audit.Log
	carried  bool // the journal carries the audit log's records
	clients  *clientBook
	broker   *approval.Broker
	exec     *action.Executor
	ssh      *sshaction.Executor
	insp     *procid.Inspector
	ops      *operation.Catalogue
	oauth    Lender
	upstream Upstreams
	bootID   string
	prevBoot string
	lock     *os.File
	ln       net.Listener // listen_unix.go, listen_windows.go

	mu       sync.Mutex
	conns    map[*conn]struct{}
	unlocked bool
	closed   bool
	// stopped is closed when the first Close has finished (gateway_stopped
	// recorded, files released): a second Close waits for it.
	stopped chan struct{}
	// epochCtx is the parent of every dispatch approved in vault epoch
	// epochOf; it is cancelled the moment the vault leaves that epoch, which
	// cuts the dispatches' connections (dispatchContext).
	epochCtx    context.Context
	epochCancel context.CancelFunc
	epochOf     uint64
	wg          sync.WaitGroup
	unsub       func()
	unsubOps    func()
	stop        context.CancelFunc
	ctx         context.Context

	// hookAfterIntent runs after a call's dispatch record and intent entry
	// are durable, and hookBeforeIntent right before they are written
	// (tests only).
	hookAfterIntent  func(key string)
	hookBeforeIntent func(ctx context.Context, key string)
	// sdkOnly leaves every call to the SDK, as before the fast path
	// (tests compare the two); fastServed counts the calls it took.
	sdkOnly    bool
	fastServed atomic.Int64
}

// Clients are the MCP clients that called a tool through this gateway
// (and earlier ones, from ClientsFile), newest call first.
func (g *Gateway) Clients() []ClientSeen { return g.clients.list() }

// NewBootID makes a random boot id.
func NewBootID() string {
	var b [16]byte
	rand.Read(b[:])
	return "boot-" + hex.EncodeToString(b[:])
}

// New takes the runtime directory's gateway lock, opens the journal (and the
// audit log unless given), records gateway_started with the previous boot id,
// and listens on the socket (on Windows, the named pipe). Errors:
// ErrAlreadyRunning, ErrConfig, ErrAddressTaken (Windows), and failures
// opening the files.
func New(cfg Config) (*Gateway, error) {
	if cfg.Vault == nil || cfg.DataDir == "" || cfg.RuntimeDir == "" || cfg.Audit == nil ||
		(cfg.Operations == nil) != (cfg.OAuth == nil) {
		return nil, ErrConfig
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Inspector == nil {
		cfg.Inspector = procid.NewInspector()
	}
	for _, d := range []string{cfg.DataDir, cfg.RuntimeDir} {
		if err := userdir.Ensure(d); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	g := &Gateway{
		cfg: cfg, log: cfg.Logger, vault: cfg.Vault, insp: cfg.Inspector,
		exec: action.New(cfg.HTTP), ssh: sshaction.New(cfg.SSH), bootID: cfg.BootID, conns: map[*conn]struct{}{}, stopped: make(chan struct{}), ops: cfg.Operations, oauth: cfg.OAuth, upstream: cfg.Upstreams,
	}
	if g.bootID == "" {
		g.bootID = NewBootID()
	}
	g.ctx, g.stop = context.WithCancel(context.Background())
	g.clients = openClientBook(cfg.DataDir)
	go g.clients.run(g.ctx.Done())
	ok := false
	defer func() {
		if !ok {
			g.release()
		}
	}()
	lock, err := takeLock(filepath.Join(cfg.RuntimeDir, LockName))
	if err != nil {
		return nil, err
	}
	g.lock = lock
	if g.journal, err = journal.OpenWith(filepath.Join(cfg.DataDir, journal.FileName), journal.Options{Logger: cfg.Logger, ResultDelay: cfg.ResultDelay}); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.audit = cfg.Audit
	// One log, one fsync: the journal's log carries the audit log's records
	// (backend/audit Carrier), so a call's durable step is one group commit.
	if err := g.audit.CarryBy(g.journal); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.carried = true
	if g.prevBoot, err = g.journal.StartBoot(g.ctx, g.bootID); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if _, err := g.audit.Append(g.ctx, audit.Event{
		Type: audit.EventGatewayStarted, Time: time.Now().UTC(), BootID: g.bootID,
		PreviousBootID: g.prevBoot, VaultEpoch: g.vault.Epoch(),
	}); err != nil {
		return nil, fmt.Errorf("gateway: recording the start: %w", err)
	}
	g.broker = approval.New(approval.Config{
		BootID: g.bootID, Timeout: cfg.ApprovalTimeout, Epoch: g.vault.Epoch, Recorder: recorder{g},
	})
	g.unlocked = g.vault.Status().State == vault.StateUnlocked
	g.newEpochLocked(g.vault.Epoch())
	g.unsub = g.vault.Subscribe(g.onVaultEvent)
	g.unsubOps = func() {}
	if g.ops != nil {
		unsubAuth := g.oauth.Subscribe(func(ev oauth.Event) {
			if ev.Disabled != "" {
				g.authorizationDisabled(ev.Disabled)
			}
		})
		// On the catalogue's own goroutine, as backend/feed delivers: the
		// SDK debounces the list_changed it sends, so this is quick.
		unsubCat := g.ops.Subscribe(g.operationsChanged)
		g.unsubOps = func() { unsubAuth(); unsubCat() }
	}
	if g.upstream != nil {
		unsubUp := g.upstream.Subscribe(g.operationsChanged)
		prev := g.unsubOps
		g.unsubOps = func() { prev(); unsubUp() }
	}
	// The lock is ours, so whatever is found at the address is stale
	// (Unix) or a squatter's (Windows, ErrAddressTaken).
	ln, err := listen(cfg.RuntimeDir)
	if err != nil {
		return nil, err
	}
	g.ln = ln
	ok = true
	return g, nil
}

// Broker is what the UI and the terminal use: pending cards, Answer,
// Sessions, Revoke, Subscribe.
func (g *Gateway) Broker() *approval.Broker { return g.broker }

// BootID returns this start's boot id.
func (g *Gateway) BootID() string { return g.bootID }

// SocketPath returns the address agents' shims dial: the socket, or on
// Windows the named pipe.
func (g *Gateway) SocketPath() string { return address(g.cfg.RuntimeDir) }

// Serve accepts connections until ctx ends or Close is called. It returns
// nil after Close.
func (g *Gateway) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { g.Close() })
	defer stop()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			g.mu.Lock()
			closed := g.closed
			g.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("gateway: accept: %w", err)
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.handle(c)
		}()
	}
}

// Close stops accepting, ends every connection, session and card, records
// gateway_stopped and closes what New opened. It is safe to call twice, and
// from two goroutines at once (Serve's context and its owner): every call
// returns only once the first has finished, so whoever closes the audit
// log next finds gateway_stopped in it.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		<-g.stopped
		return nil
	}
	g.closed = true
	defer close(g.stopped)
	conns := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	g.ln.Close()
	for _, c := range conns {
		c.close()
	}
	g.broker.Close()
	g.wg.Wait()
	g.ssh.CloseIdle()
	g.unsub()
	g.unsubOps()
	if _, err := g.audit.Append(context.Background(), audit.Event{Type: audit.EventGatewayStopped, Time: time.Now().UTC(), BootID: g.bootID, VaultEpoch: g.vault.Epoch()}); err != nil {
		g.log.Warn("recording gateway_stopped", "err", err)
	}
	g.release()
	return nil
}

func (g *Gateway) release() {
	g.stop()
	<-g.clients.done
	if g.carried {
		// Before the journal closes: the audit log makes its own file
		// durable and writes it by itself again (the keeper keeps it open).
		if err := g.audit.CarryBy(nil); err != nil {
			g.log.Warn("audit log: taking back its records from the journal", "err", err)
		}
	}
	if g.journal != nil {
		g.journal.Close()
	}
	if g.ln != nil {
		g.ln.Close()
	}
	if g.lock != nil {
		releaseLock(g.lock)
	}
}

// newEpochLocked cancels every dispatch of the epoch before and opens the
// context for dispatches approved in epoch. g.mu held (or not yet shared).
func (g *Gateway) newEpochLocked(epoch uint64) {
	if g.epochCancel != nil {
		g.epochCancel()
	}
	g.epochCtx, g.epochCancel = context.WithCancel(g.ctx)
	g.epochOf = epoch
}

// onVaultEvent cuts every request in flight when the vault leaves the epoch
// they were approved in (before anything else, and before the lock's
// announcement returns), ends sessions and cards bound to an old epoch and
// changes the tool list: while locked, only the built-ins are listed.
func (g *Gateway) onVaultEvent(vault.Event) {
	g.mu.Lock()
	left := false
	if epoch := g.vault.Epoch(); epoch != g.epochOf || g.vault.Status().State != vault.StateUnlocked {
		g.newEpochLocked(epoch)
		left = true
	}
	g.mu.Unlock()
	if left {
		// Connections kept alive for the old epoch's credentials are not
		// reused by the next one.
		g.exec.CloseIdleConnections()
		g.ssh.CloseIdle()
	}
	// Vault lock and unlock are recorded by the audit log's owner
	// (backend/keeper), once, whoever runs the gateway.
	g.broker.EpochChanged()
	unlocked := g.vault.Status().State == vault.StateUnlocked
	g.mu.Lock()
	g.unlocked = unlocked
	conns := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	ops := g.catalogue(unlocked)
	for _, c := range conns {
		c.setTools(unlocked, ops)
	}
}
