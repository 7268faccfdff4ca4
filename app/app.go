// Package app is the adapter between Yett's backend and the Wails desktop
// shell. It is the only package that imports Wails.
//
// It owns the process-level wiring of the desktop app: the single-instance
// lock, opening the vault in the per-user data directory, auto-lock on sleep
// and screen lock, and the bound services the web UI calls. Everything it
// hands to the UI is a redacted view type: no secret value ever crosses into
// the frontend, and errors are turned into chosen public text.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/yettdev/yett/backend/autostart"
	"github.com/yettdev/yett/backend/gateway"
	"github.com/yettdev/yett/backend/instance"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/lockwatch"
	"github.com/yettdev/yett/backend/userdir"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/backend/vault/oskeyring"
)

// Config is what the desktop app needs from its environment.
type Config struct {
	DataDir    string
	RuntimeDir string
	Log        *slog.Logger
	// Keyring enables the OS keyring as an optional unlock method.
	Keyring vault.KeyringOpener
	// CLIPath is the yett command line installed with the app; the gateway
	// only accepts its `yett mcp` on the socket. "" accepts any program.
	CLIPath string
	// Background starts Yett with its window hidden (autostart.BackgroundFlag,
	// as "Start Yett when I log in" does): it serves agents and shows the
	// window when a card needs the person.
	Background bool
}

// ConfigFromEnv resolves the per-user directories (honouring YETT_DATA_DIR
// and YETT_RUNTIME_DIR) and the default OS keyring.
func ConfigFromEnv() (Config, error) {
	data, err := userdir.DataDir(os.Getenv)
	if err != nil {
		return Config{}, err
	}
	run, err := userdir.RuntimeDir(os.Getenv)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		DataDir:    data,
		RuntimeDir: run,
		Log:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Keyring:    oskeyring.Default(),
	}
	if exe, err := os.Executable(); err == nil {
		name := "yett"
		if goruntime.GOOS == "windows" {
			name = "yett.exe"
		}
		cfg.CLIPath = filepath.Join(filepath.Dir(exe), name)
	}
	cfg.Background = slices.Contains(os.Args[1:], autostart.BackgroundFlag)
	return cfg, nil
}

// App is the running desktop application.
type App struct {
	cfg     Config
	primary *instance.Primary
	vault   *vault.Vault
	events  *eventSink
	Vault   *VaultService
	Audit   *AuditService
	// Approvals shows the gateway's cards and live sessions; it has no
	// broker until the gateway starts (Approvals.attach).
	Approvals *ApprovalService
	// OAuth connects accounts and keeps their inventory; it has no manager
	// until the audit log is open (OAuth.attach).
	OAuth *OAuthService
	// Desktop is Yett in the background: autostart, notifications and their
	// policy, keeping running after the window closes, quitting.
	Desktop *DesktopService
	desk    desktop
	// Connect tells the "Connect an agent" page how to add Yett to agents.
	Connect *ConnectService
	// Inventory is the owner inventory and its revocation drills; it has no
	// inventory until the keeper runs one (Inventory.attach).
	Inventory *InventoryService
	// SSH is the SSH hosts (backend/sshhosts, run by the keeper).
	SSH *SSHService
	// MCP is the upstream MCP servers (backend/upstream, run by the
	// keeper where the gateway runs).
	MCP *MCPService
	// Team is this machine's team membership and, for a lead, the team's
	// inventory (backend/team).
	Team *TeamService

	keeper  *keeper.Keeper
	keeping keeping
	// tray is the tray (menu bar) icon's menu; stopTray ends its following
	// of the vault.
	tray     tray
	stopTray func()

	mu     sync.Mutex
	ctx    context.Context // Wails runtime context, set on startup
	stopBg context.CancelFunc
	bgDone chan struct{}
}

// New takes the single-instance lock and opens the vault. If another Yett
// is already running it asks it to show its window and returns
// instance.ErrAlreadyRunning.
func New(cfg Config) (*App, error) {
	if err := checkBuild(cfg); err != nil {
		return nil, err
	}
	for _, d := range []string{cfg.DataDir, cfg.RuntimeDir} {
		if err := userdir.Ensure(d); err != nil {
			return nil, err
		}
	}
	a := &App{cfg: cfg, events: &eventSink{}}
	a.loadDesktopPrefs()
	primary, err := instance.Acquire(cfg.RuntimeDir, "app", a.focus)
	if err != nil {
		return nil, err
	}
	a.primary = primary
	primary.OnQuit(a.quit) // yett quit
	v, err := vault.Open(cfg.DataDir, vault.Options{Keyring: cfg.Keyring})
	if err != nil {
		primary.Release()
		return nil, fmt.Errorf("open vault: %w", err)
	}
	a.vault = v
	a.Vault = newVaultService(v, a.events, cfg.Log, cfg.Keyring != nil)
	a.Approvals = newApprovalService(a.events, cfg.Log)
	a.tray = tray{do: a, log: cfg.Log}
	a.Approvals.onWaiting = func(cards []ApprovalCard) {
		a.setWaiting(len(cards))
		a.tray.setCards(cards)
	}
	a.OAuth = newOAuthService(a.events, cfg.Log)
	a.Inventory = newInventoryService(a.events, cfg.Log)
	a.OAuth.inventory = a.Inventory
	a.Vault.inventory = a.Inventory
	// The keeper runs the audit writer, OAuth custody and the gateway for
	// this data directory, as it does for yett serve. The audit log never
	// stops the app from starting: a log that cannot be opened or verified
	// is shown in the UI's banner instead.
	k, err := keeper.Open(keeper.Config{
		DataDir: cfg.DataDir, RuntimeDir: cfg.RuntimeDir, Vault: v, Logger: cfg.Log,
		ShimPath: cfg.CLIPath, OpenBrowser: a.openBrowser,
		// Cards reach the person as notifications, and bring the window
		// back when a notification is clicked or cannot be shown.
		Notify: openNotifications, Raise: a.raise,
	})
	if err != nil {
		v.Close()
		primary.Release()
		return nil, err
	}
	a.keeper = k
	a.Inventory.setBlock = k.SetBlockUncontrolled
	a.Audit = newAuditService(v, k, a.events, cfg.Log, auditEventSpacing)
	a.Desktop = newDesktopService(a)
	a.SSH = newSSHService(k.SSHHosts(), v, a.events, cfg.Log)
	a.SSH.inventory = a.Inventory
	a.MCP = newMCPService(v, k, a.events, cfg.Log)
	a.MCP.inventory = a.Inventory
	a.Team = newTeamService(v, cfg.DataDir, k.Team, a.Inventory, a.events, cfg.Log)
	a.Connect = newConnectService(cfg.CLIPath, func() (bool, string) {
		st := k.State()
		return st.SocketPath != "", st.GatewayProblem
	})
	a.Connect.clients = func() ([]gateway.ClientSeen, error) { return gateway.ReadClients(cfg.DataDir) }
	a.followKeeper()
	a.stopTray = a.followVaultForTray()
	return a, nil
}

// Options returns the Wails options for the Yett window.
func (a *App) Options(assets fs.FS) *options.App {
	return &options.App{
		Title:            "Yett",
		Width:            1100,
		Height:           760,
		MinWidth:         820,
		MinHeight:        560,
		BackgroundColour: options.NewRGB(0xf6, 0xf7, 0xf9),
		AssetServer:      &assetserver.Options{Assets: assets},
		OnStartup:        a.startup,
		OnShutdown:       a.shutdown,
		OnBeforeClose:    a.beforeClose,
		StartHidden:      a.cfg.Background,
		Menu:             a.appMenu(),
		Bind:             []interface{}{a.Vault, a.Audit, a.Approvals, a.OAuth, a.Connect, a.Desktop, a.Inventory, a.SSH, a.MCP, a.Team},
		Linux:            &linux.Options{ProgramName: "yett"},
	}
}

func (a *App) startup(ctx context.Context) {
	a.mu.Lock()
	a.ctx = ctx
	a.mu.Unlock()
	a.events.attachSeq(func(name string, data any, seq uint64) { runtime.EventsEmit(ctx, name, data, seq) })
	a.Audit.setSaveDialog(wailsSaveDialog(ctx))
	a.Inventory.setSaveDialog(inventorySaveDialog(ctx))
	a.watchSignals()
	a.Approvals.push() // the window title counts the cards already waiting
	a.raiseQueuedAtStartup()
	a.Vault.setDialogs(fileDialogsFor(ctx))
	a.startTray()

	bg, stop := context.WithCancel(context.Background())
	a.stopBg = stop
	a.bgDone = make(chan struct{})
	go func() {
		defer close(a.bgDone)
		err := lockwatch.Watch(bg, func(r lockwatch.Reason) {
			if err := a.vault.Lock(string(r)); err != nil && !errors.Is(err, vault.ErrLocked) {
				a.cfg.Log.Warn("auto-lock failed", "reason", r, "err", err)
			}
		}, lockwatch.Options{Logger: a.cfg.Log})
		if err != nil && bg.Err() == nil {
			a.cfg.Log.Warn("no sleep or screen-lock source to watch; only the idle timer locks the vault", "err", err)
		}
	}()
}

func (a *App) shutdown(ctx context.Context) {
	if a.stopBg != nil {
		a.stopBg()
		select {
		case <-a.bgDone:
		case <-time.After(3 * time.Second):
		}
	}
	a.Close()
}

// Close locks the vault (recorded in the audit log, with a checkpoint),
// stops what the keeper runs, closes the vault and releases the
// single-instance lock.
func (a *App) Close() {
	if a.stopTray != nil {
		a.stopTray()
	}
	a.tray.attach(nil)
	if a.keeping.cancel != nil {
		a.keeping.cancel()
	}
	a.Approvals.attach(nil)
	a.OAuth.attach(nil, nil)
	a.Inventory.attach(nil)
	a.Audit.close()
	if a.keeper != nil {
		if err := a.keeper.Close(); err != nil {
			a.cfg.Log.Warn("closing", "err", err)
		}
	}
	a.OAuth.close()
	a.Inventory.close()
	a.SSH.close()
	a.MCP.close()
	a.Team.close()
	a.Approvals.close()
	a.Vault.close()
	if a.vault != nil {
		_ = a.vault.Close()
	}
	if a.primary != nil {
		a.primary.Release()
	}
}

// focus brings the window back, with the oldest waiting card in view, when
// Yett is launched again.
func (a *App) focus() { a.raise("") }
