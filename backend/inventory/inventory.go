package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/userdir"
)

// Errors callers branch on. Their texts name the field and the rule, never
// a value.
var (
	ErrConfig   = errors.New("inventory: incomplete configuration")
	ErrInvalid  = errors.New("inventory: invalid input")
	ErrNotFound = errors.New("inventory: no such row")
	// ErrDrillRunning: a drill of this authorization is running already.
	ErrDrillRunning = errors.New("inventory: a drill of this authorization is running")
	// ErrNotDrillable: drills apply to OAuth authorizations only, and only
	// to one that is active (a full drill also takes a suspended one).
	ErrNotDrillable = errors.New("inventory: this row cannot be drilled now")
)

// Defaults.
const (
	// DefaultReviewAfter: a row's expiry review date, counted from its
	// connection, unless the person set one.
	DefaultReviewAfter = 90 * 24 * time.Hour
	// DefaultDrillEveryDays: how often a row is drilled unless the person
	// set another schedule.
	DefaultDrillEveryDays = 90
)

// Config configures an Inventory. DataDir, Audit and at least one Source
// are required.
type Config struct {
	DataDir string
	// Audit records every edit and every drill.
	Audit *audit.Log
	// Host is the process that runs the inventory; nil: one with no
	// gateway, always ready, on the system clock.
	Host    Host
	Sources []Source
	// Custody is OAuth custody's drill side; nil runs no drills.
	Custody Custody
	// Environments is where an OAuth row's environment is written.
	Environments Authorizations
	// Catalogue is the named operations a drill client calls.
	Catalogue Operations
	// Bindings is the vault's binding decision, which a full drill asks
	// about the provider's endpoints.
	Bindings Bindings
	// Trail reads the audit log (while the vault is unlocked); nil leaves
	// last confirmed uses empty and fails a drill's audit step.
	Trail Trail
	// Notifier raises reminders to the owner; nil raises none.
	Notifier Notifier
	// Tick is how often the scheduler looks for due reviews and drills; 0
	// means one minute. It also looks at once when Kick is called.
	Tick time.Duration
	// NoScheduler runs no scheduler (a process that serves no agents).
	NoScheduler bool
	Logger      *slog.Logger
	// Surface names the front end in audit entries.
	Surface string
	// HostName names this machine in the "held on" column; "" asks the OS.
	HostName string
}

// Host is what the inventory needs from the process that runs it (the
// keeper): who it is in audit entries, the gateway a drill calls through,
// word of changes in its sources, whether a scheduled drill may run, and
// the time. The inventory calls these from its scheduler and from drills,
// never while it holds its own locks.
type Host interface {
	// BootID names the gateway in audit entries: the one that runs or
	// will run next ("" when this process runs none).
	BootID() string
	// Gateway returns the running gateway, or nil while none runs in this
	// process; a drill's client connects through it.
	Gateway() Gateway
	// Changes calls fn after each change of the sources (custody, the
	// vault, the catalogue) until cancel.
	Changes(fn func()) (cancel func())
	// Ready says whether a scheduled drill can run now: the vault is
	// unlocked (custody opens its tokens) and the gateway serves (the drill
	// client calls through it).
	Ready() bool
	// Now is the time.
	Now() time.Time
}

// standalone is the Host of an inventory no process hosts.
type standalone struct{}

func (standalone) BootID() string                 { return "" }
func (standalone) Gateway() Gateway               { return nil }
func (standalone) Changes(func()) (cancel func()) { return func() {} }
func (standalone) Ready() bool                    { return true }
func (standalone) Now() time.Time                 { return time.Now() }

// Inventory is the owner inventory of one data directory. Safe for
// concurrent use.
type Inventory struct {
	cfg  Config
	db   *gorm.DB
	log  *slog.Logger
	held string

	block atomic.Bool
	// control is the last computed map of refs to under-control; dirty
	// says the sources or records changed since.
	control atomic.Pointer[map[string]bool]
	dirty   atomic.Bool
	ctlMu   sync.Mutex

	mu      sync.Mutex
	running map[string]*Report // drills in progress, by authorization
	usesMu  sync.Mutex         // one catch-up of the audit log at a time

	changes feed.Feed[Change]
	unsub   func()
	kick    chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// Change tells subscribers what changed: a row (its id), or a drill's
// progress (its report so far). Both empty: the inventory as a whole.
type Change struct {
	Row   string
	Drill *Report
}

// Open opens (or creates) inventory.db in cfg.DataDir and starts the
// scheduler.
func Open(cfg Config) (*Inventory, error) {
	if cfg.DataDir == "" || cfg.Audit == nil || len(cfg.Sources) == 0 {
		return nil, ErrConfig
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Host == nil {
		cfg.Host = standalone{}
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Minute
	}
	if err := userdir.Ensure(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	db, err := store.Open(filepath.Join(cfg.DataDir, FileName), history(cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	host := cfg.HostName
	if host == "" {
		host, _ = os.Hostname()
	}
	inv := &Inventory{cfg: cfg, db: db, log: cfg.Logger, held: "this machine (" + host + ")",
		running: map[string]*Report{}, kick: make(chan struct{}, 1)}
	// The block switch is the host's to hand over (UseBlockUncontrolled),
	// from its sealed controls; until then nothing is blocked.
	inv.dirty.Store(true)
	inv.unsub = cfg.Host.Changes(inv.sourcesChanged)
	inv.ctx, inv.stop = context.WithCancel(context.Background())
	if !cfg.NoScheduler {
		inv.wg.Add(1)
		go inv.schedule()
	}
	return inv, nil
}

// Close stops the scheduler and any running drill (which stops where it
// is safe) and closes the database.
func (inv *Inventory) Close() error {
	inv.unsub()
	inv.stop()
	inv.wg.Wait()
	return store.Close(inv.db)
}

// Subscribe calls fn after every change, as backend/feed delivers.
func (inv *Inventory) Subscribe(fn func(Change)) (cancel func()) { return inv.changes.Subscribe(fn) }

func (inv *Inventory) now() time.Time { return inv.cfg.Host.Now() }

// sourcesChanged: custody, the vault or the catalogue changed.
func (inv *Inventory) sourcesChanged() {
	inv.dirty.Store(true)
	inv.changes.Publish(Change{})
}

// Kick makes the scheduler look for due reviews and drills now (after an
// unlock: a drill missed while Yett was not running runs at the next
// start, once custody can open its tokens).
func (inv *Inventory) Kick() {
	inv.dirty.Store(true)
	select {
	case inv.kick <- struct{}{}:
	default:
	}
}

// record appends an inventory event; it is a fact about what happened, so
// a failure is logged, not returned.
func (inv *Inventory) record(ctx context.Context, ev audit.Event) (int64, bool) {
	ev.Time, ev.BootID, ev.Surface = inv.now().UTC(), inv.cfg.Host.BootID(), inv.cfg.Surface
	idx, err := inv.cfg.Audit.Append(context.WithoutCancel(ctx), ev)
	if err != nil {
		inv.log.Error("audit log refused an inventory event", "type", string(ev.Type))
		return 0, false
	}
	return idx, true
}
