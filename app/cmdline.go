package app

import (
	"fmt"
	"io"

	"github.com/yettdev/yett/backend/autostart"
	"github.com/yettdev/yett/backend/version"
)

// DesktopUsage is what `yett-desktop --help` prints (build/linux/yett-desktop.1
// says the same).
const DesktopUsage = `usage: yett-desktop [` + autostart.BackgroundFlag + `]
       yett-desktop --version
       yett-desktop --help

Starts Yett's desktop app: the vault, the approval cards and the agent
gateway in one process, and its window. Only one runs per user: starting
it again brings the open window to the front.

  ` + autostart.BackgroundFlag + `  start with the window hidden (what starting at login uses):
                cards come as notifications, and starting yett-desktop
                again brings the window back

Closing the window keeps Yett running in the background (the first close
asks); yett quit ends it. Its tray (menu-bar) icon counts the waiting
cards and opens the window on one, locks the vault or quits; it never
answers a card or unlocks. F1 in the window lists the keyboard shortcuts.

The command line is yett(1): yett mcp (what agents start), yett serve
(the gateway without a window) and the headless commands, SSH hosts and
MCP servers included.
`

// CommandLine answers the arguments that only print, --help and --version
// (and -h, help, version), before anything starts: no window, no display,
// no gateway, no socket. It reports whether it answered; the app must then
// exit with code.
func CommandLine(args []string, stdout io.Writer) (answered bool, code int) {
	if len(args) != 1 {
		return false, 0
	}
	switch args[0] {
	case "--help", "-h", "help":
		fmt.Fprint(stdout, DesktopUsage)
		return true, 0
	case "--version", "version":
		fmt.Fprintf(stdout, "yett-desktop %s\n", version.String())
		return true, 0
	}
	return false, 0
}
