package app

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateMan = flag.Bool("update-man", false, "rewrite build/linux/yett-desktop.1 from DesktopUsage")

// desktopManPath is the page the Linux packages install as yett-desktop(1).
const desktopManPath = "../build/linux/yett-desktop.1"

// desktopShortcuts are the window's keyboard shortcuts as the page lists
// them. The frontend's shortcutHelp (frontend/src/lib/shortcuts.ts) is
// what the About view shows; its test checks that every entry there is on
// this page, so the two cannot drift apart.
var desktopShortcuts = [][2]string{
	{"Ctrl+L", "Lock the vault now"},
	{"Ctrl+1 ... Ctrl+9", "Open the first nine views, in the sidebar's order"},
	{"F1", "Open About and the list of shortcuts"},
	{"Ctrl+F", "Search or filter the open page (Credentials, Activity)"},
	{"Ctrl+J", "Go to the oldest waiting approval card"},
	{"A", "Approve the approval card that has keyboard focus"},
	{"D", "Deny the approval card that has keyboard focus"},
	{"Esc", "Cancel a confirmation or close an open form"},
}

// desktopManPage renders yett-desktop(1): the synopsis and options are
// DesktopUsage, what --help prints.
func desktopManPage() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w(`.\" Generated from app.DesktopUsage by`)
	w(`.\" go test ./app -run TestDesktopManPage -update-man; do not edit.`)
	w(`.TH YETT-DESKTOP 1 "" "Yett" "User Commands"`)
	w(".SH NAME")
	w(`yett-desktop \- the Yett desktop app: vault, approvals, connections, activity`)
	w(".SH SYNOPSIS")
	w(".nf")
	for _, line := range strings.Split(strings.TrimRight(DesktopUsage, "\n"), "\n") {
		w("%s", manLine(line))
	}
	w(".fi")
	w(".SH DESCRIPTION")
	w(`Yett stands between AI coding agents and the outside world. Agents never hold`)
	w(`an API key, an SSH key or an OAuth token: those live in Yett's encrypted vault.`)
	w(`An agent asks Yett, over MCP, to act; Yett decides whether this agent process`)
	w(`may do it now, injects the credential itself, acts, and records it in a`)
	w(`tamper-evident audit log.`)
	w(".PP")
	w(`The app is usually started from the applications menu. The first time, it asks`)
	w(`you to create the vault. From then on it runs the agent gateway while it runs:`)
	w(`agents reach it through`)
	w(`.BR "yett mcp" ,`)
	w(`the`)
	w(`.BR yett (1)`)
	w(`installed next to it, and approval requests appear in its window and as`)
	w(`notifications. Its views: Connect an agent (adds Yett to Claude Code, Codex,`)
	w(`Cursor or VS Code), Credentials (HTTP secrets, edited and rotated, each with`)
	w(`its age and an optional rotation reminder; a removal can be undone for 30`)
	w(`seconds), SSH hosts`)
	w(`(keys made or imported, host keys pinned, commands an agent may run), MCP`)
	w(`servers (other servers whose tools agents get through Yett), Connections`)
	w(`(OAuth accounts and named operations), the owner Inventory with revocation`)
	w(`drills, Sessions, Activity and the audit log, and Settings (with the last`)
	w(`backup and a reminder when none was made in 30 days). A "?" beside a word`)
	w(`such as checkpoint or backup revoker explains it; About lists them all.`)
	w(".SH BACKGROUND")
	w(`Closing the window keeps Yett running, and the gateway with it; the first`)
	w(`close asks whether to keep it so or quit. Cards then come as notifications,`)
	w(`and starting`)
	w(`.B yett-desktop`)
	w(`again brings the window back.`)
	w(`.B "yett quit"`)
	w(`asks a running Yett to quit. Settings can start it at login, in the`)
	w(`background.`)
	w(".SH KEYBOARD")
	w(`On macOS, Cmd takes the place of Ctrl.`)
	for _, s := range desktopShortcuts {
		w(".TP")
		w(".B %s", manLine(s[0]))
		w("%s.", manLine(s[1]))
	}
	w(".PP")
	w(`A and D answer a card only while it has keyboard focus, and only a fresh`)
	w(`key press a moment after the card came forward: the key that answered one`)
	w(`card never answers the next.`)
	w(".SH ENVIRONMENT")
	w(".TP")
	w(".B YETT_DATA_DIR")
	w(`Where Yett keeps its files; by default`)
	w(`.I $XDG_DATA_HOME/yett`)
	w(`or`)
	w(`.IR ~/.local/share/yett .`)
	w(`Removing the package never touches it.`)
	w(".TP")
	w(".B YETT_RUNTIME_DIR")
	w(`Where the gateway's socket and the single-instance lock live.`)
	w(".SH SEE ALSO")
	w(`.BR yett (1)`)
	return b.String()
}

// manLine escapes one line for roff: backslashes, dashes, and a line that
// would start with a control character.
func manLine(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\e`), "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// TestDesktopManPage: the installed yett-desktop(1) is what DesktopUsage and
// the shortcut list render to (go test ./app -run TestDesktopManPage
// -update-man rewrites it).
func TestDesktopManPage(t *testing.T) {
	want := desktopManPage()
	if *updateMan {
		if err := os.WriteFile(desktopManPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(desktopManPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what DesktopUsage renders to: go test ./app -run TestDesktopManPage -update-man", desktopManPath)
	}
}
