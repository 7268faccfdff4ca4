package app

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/vault"
)

// The tray (menu bar) icon: how many cards wait, each by who asks and for
// what, Open, Lock now and Quit. Its menu is a channel an agent can drive:
// on Linux any process of the user on the session bus can send the
// dbusmenu Event that a click sends. So a click may only do what
// trayActions offers: bring the window forward with a card in view (the
// card is then answered in the window, under the window's own rules), lock
// the vault (less authority), or quit. Nothing here can answer a card or
// unlock the vault (TestForgedTrayClicksNeverAnswerOrUnlock).

// trayActions is everything a tray click may do.
type trayActions interface {
	raise(card string)
	lockVault()
	quit()
}

// trayIcon is the OS's tray icon (tray_systray.go): it shows a menu and
// reports clicks by the slot clicked.
type trayIcon interface {
	show(trayMenu)
	close()
}

// The menu's layout is fixed (trays add and remove items badly): a
// header, a slot for each of the oldest waiting cards, one for the rest,
// then Open, Lock now and Quit.
const (
	trayHeader    = 0
	trayFirstCard = 1
	trayMore      = trayFirstCard + trayCardSlots
	trayOpen      = trayMore + 1
	trayLock      = trayOpen + 1
	trayQuit      = trayLock + 1
	traySlots     = trayQuit + 1
)

// trayCardSlots is how many waiting cards the menu names.
const trayCardSlots = 5

// trayLabelRunes bounds a card's entry; trayPartRunes each part of it that
// an agent chose.
const (
	trayLabelRunes = 64
	trayPartRunes  = 32
)

type trayDo int

const (
	trayDoNothing trayDo = iota
	trayDoOpen
	trayDoShowCard
	trayDoLock
	trayDoQuit
)

// trayItem is one slot of the menu.
type trayItem struct {
	Label            string
	Enabled, Visible bool
	// SeparatorBefore: a line above this item (fixed with the layout).
	SeparatorBefore bool
	do              trayDo
	card            string
}

// trayMenu is what the icon shows.
type trayMenu struct {
	Tooltip string
	Items   [traySlots]trayItem
}

// buildTrayMenu is the menu for the waiting cards (oldest first) and the
// vault's state: Lock now while it is unlocked, "Vault locked" while it is
// locked, nothing while there is no vault to lock (none yet, or damaged).
func buildTrayMenu(cards []ApprovalCard, state vault.State) trayMenu {
	var m trayMenu
	n := len(cards)
	switch n {
	case 0:
		m.Tooltip = "Yett: no approval waiting"
		m.Items[trayHeader] = trayItem{Label: "No approval waiting", Visible: true}
	case 1:
		m.Tooltip = "Yett: 1 approval waiting"
		m.Items[trayHeader] = trayItem{Label: "1 approval waiting", Visible: true}
	default:
		m.Tooltip = fmt.Sprintf("Yett: %d approvals waiting", n)
		m.Items[trayHeader] = trayItem{Label: fmt.Sprintf("%d approvals waiting", n), Visible: true}
	}
	for i := range trayCardSlots {
		slot := &m.Items[trayFirstCard+i]
		if i < n {
			*slot = trayItem{Label: trayCardLabel(cards[i]), Enabled: true, Visible: true, do: trayDoShowCard, card: cards[i].ID}
		}
	}
	if n > trayCardSlots {
		m.Items[trayMore] = trayItem{Label: fmt.Sprintf("%d more in the window…", n-trayCardSlots), Enabled: true, Visible: true, do: trayDoOpen}
	}
	m.Items[trayOpen] = trayItem{Label: "Open Yett", Enabled: true, Visible: true, SeparatorBefore: true, do: trayDoOpen}
	switch state {
	case vault.StateUnlocked:
		m.Items[trayLock] = trayItem{Label: "Lock the vault now", Enabled: true, Visible: true, do: trayDoLock}
	case vault.StateLocked:
		m.Items[trayLock] = trayItem{Label: "Vault locked", Visible: true}
	}
	m.Items[trayQuit] = trayItem{Label: "Quit Yett", Enabled: true, Visible: true, SeparatorBefore: true, do: trayDoQuit}
	return m
}

// trayCardLabel names a card in a line: who asks, and for what. The
// program's name is the agent's choice (it names its own file), so it is
// made safe and clipped like everything else from the card.
func trayCardLabel(c ApprovalCard) string {
	who := c.Agent.Executable
	if who == "" {
		who = c.Agent.Name
	}
	who = traySafe(who, trayPartRunes)
	var what string
	switch {
	case c.Kind == "access":
		what = "asks for " + traySafe(c.Wants, trayPartRunes)
	case c.Command != "":
		what = "runs a command on " + traySafe(c.Credential, trayPartRunes)
	case c.Tool != "":
		what = "calls " + traySafe(c.Tool, trayPartRunes)
	case c.Kind == "call":
		what = traySafe(c.Method, 8) + " " + traySafe(c.Target, trayPartRunes)
	default:
		what = "asks to use " + traySafe(c.Target, trayPartRunes)
	}
	return traySafe(who+": "+what, trayLabelRunes)
}

// traySafe makes agent-chosen text fit for a menu line: invalid UTF-8,
// controls (a newline would start a second line) and format characters
// (a right-to-left override would reverse what follows) are shown escaped,
// as the terminal shows them (cmd/yett's terminalSafe), and the text is
// clipped to max runes. Mnemonic markers ('_', '&') are the OS adapter's
// to escape.
func traySafe(s string, max int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		part := string(r)
		if r == utf8.RuneError && size == 1 {
			part = "\\ufffd"
		} else if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
			part = fmt.Sprintf("\\u%04x", r)
		}
		if n+utf8.RuneCountInString(part) > max {
			b.WriteString("…")
			break
		}
		b.WriteString(part)
		n += utf8.RuneCountInString(part)
	}
	return b.String()
}

// tray keeps the menu current and carries out its clicks.
type tray struct {
	do  trayActions
	log *slog.Logger

	mu    sync.Mutex
	icon  trayIcon
	cards []ApprovalCard
	vault vault.State
	menu  trayMenu
}

// setCards and setVault are the tray's two inputs: the waiting cards and
// the vault's state.
func (t *tray) setCards(cards []ApprovalCard) {
	t.mu.Lock()
	t.cards = append([]ApprovalCard(nil), cards...)
	t.mu.Unlock()
	t.render()
}

func (t *tray) setVault(state vault.State) {
	t.mu.Lock()
	t.vault = state
	t.mu.Unlock()
	t.render()
}

// render builds the menu and shows it; the lock keeps the icon's menus in
// the order they were built.
func (t *tray) render() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.menu = buildTrayMenu(t.cards, t.vault)
	if t.icon != nil {
		t.icon.show(t.menu)
	}
}

// attach shows the menu on icon (nil detaches it).
func (t *tray) attach(icon trayIcon) {
	t.mu.Lock()
	old := t.icon
	t.icon = icon
	t.mu.Unlock()
	if old != nil {
		old.close()
	}
	t.render()
}

// click carries out a click on slot, as the menu shows it now: a hidden
// or disabled item does nothing, whoever sent the click.
func (t *tray) click(slot int) {
	t.mu.Lock()
	var it trayItem
	if slot >= 0 && slot < traySlots {
		it = t.menu.Items[slot]
	}
	t.mu.Unlock()
	if !it.Visible || !it.Enabled {
		it.do = trayDoNothing
	}
	switch it.do {
	case trayDoOpen:
		t.do.raise("")
	case trayDoShowCard:
		t.do.raise(it.card)
	case trayDoLock:
		t.do.lockVault()
	case trayDoQuit:
		t.do.quit()
	}
	t.log.Info("tray click", "slot", slot, "did", trayDoWords[it.do])
}

var trayDoWords = map[trayDo]string{
	trayDoNothing: "nothing", trayDoOpen: "open", trayDoShowCard: "show card", trayDoLock: "lock", trayDoQuit: "quit",
}

// lockVault is the tray's Lock now: recorded with the reason "tray".
func (a *App) lockVault() {
	if err := a.vault.Lock("tray"); err != nil {
		a.cfg.Log.Warn("locking from the tray", "err", err)
	}
}

// followVaultForTray keeps the tray's Lock item true to the vault.
func (a *App) followVaultForTray() func() {
	a.tray.setVault(a.vault.Status().State)
	return a.vault.Subscribe(func(vault.Event) { a.tray.setVault(a.vault.Status().State) })
}

// startTray puts the icon in the tray, where the system has one.
func (a *App) startTray() {
	icon, err := openTray(a.tray.click, a.cfg.Log)
	if err != nil {
		a.cfg.Log.Info("tray", "err", err)
		return
	}
	a.tray.attach(icon)
}
