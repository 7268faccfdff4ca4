//go:build unix

package main

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/vault"
)

// terminal shows cards and takes answers at the controlling terminal.
type terminal struct {
	tty *os.File
	v   *vault.Vault
	b   *approval.Broker

	mu     sync.Mutex
	next   int
	cards  map[int]approval.Request // shown and still pending
	codes  map[int]string           // each shown card's one-time code
	wrong  map[int]int              // wrong codes typed for a card
	byID   map[string]int
	sess   []approval.Session
	grants []approval.Grant // as the last "sessions" listed them
	// ttyName names the terminal in the audit log's record of an answer.
	ttyName string
}

// codeAlphabet has no letters or digits that read alike (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// codeLen is the length of a card's one-time code: 31^5, about 2^25.
const codeLen = 5

// maxWrongCodes ends a card (denied) after this many wrong codes, so a
// program that can type into the terminal cannot try its way through.
const maxWrongCodes = 3

// newCode makes a card's one-time code. A program that pushes keystrokes
// into this terminal (TIOCSTI, or anything else that types) does not see
// what yett serve writes to it, so it cannot type the code; the person
// reads it off the card.
func newCode() string {
	var b [codeLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("serve: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b[:])
}

func (t *terminal) unlock() error {
	for i := 0; i < 3; i++ {
		p, err := readPassphrase(t.tty, "Yett vault passphrase: ")
		if err != nil {
			return err
		}
		err = t.v.Unlock(p)
		var th *vault.ThrottledError
		switch {
		case err == nil:
			return nil
		case errors.Is(err, vault.ErrWrongPassphrase):
			fmt.Fprintln(t.tty, "Wrong passphrase.")
		case errors.As(err, &th):
			fmt.Fprintf(t.tty, "Too many wrong passphrases; try again in %s.\n", th.RetryAfter.Round(time.Second))
			return errors.New("serve: unlock throttled")
		default:
			return fmt.Errorf("serve: unlock: %w", err)
		}
	}
	return errors.New("serve: the vault stayed locked")
}

// refresh prints new cards and notes the ones that went away unanswered.
// Cards it refuses are answered after its lock is released: the answer's
// own update comes back here.
func (t *terminal) refresh() {
	var refuse []string
	defer func() {
		for _, id := range refuse {
			t.b.Answer(id, false, "terminal")
		}
	}()
	pending := t.b.Pending()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cards == nil {
		t.cards, t.byID = map[int]approval.Request{}, map[string]int{}
		t.codes, t.wrong = map[int]string{}, map[int]int{}
	}
	live := map[string]bool{}
	for _, r := range pending {
		live[r.ID] = true
		if n, shown := t.byID[r.ID]; shown {
			if r.AgentStoppedWaiting != t.cards[n].AgentStoppedWaiting {
				t.cards[n] = r
				if r.AgentStoppedWaiting {
					fmt.Fprintf(t.tty, "[%d] the agent stopped waiting (its own time limit); the card stays: if it sends this call again, your answer applies to it.\n", n)
				} else {
					fmt.Fprintf(t.tty, "[%d] the agent is waiting again (it sent this call again).\n", n)
				}
			}
			continue
		}
		t.next++
		n := t.next
		t.cards[n], t.byID[r.ID] = r, n
		if pid, ok := inOurSession(r.Who); ok {
			// A process in this terminal's session (the agent, or the
			// agent a helper it started with setsid descends from) could
			// type into this terminal: refuse here, the person approves
			// elsewhere.
			refuse = append(refuse, r.ID)
			fmt.Fprintf(t.tty, "\n[%d] refused: %s (pid %d) asks, and pid %d of its chain runs in yett serve's own terminal session, so it could type into this terminal. Run the agent in another session, or use the app.\n",
				n, terminalSafe(r.Who.Name), r.Who.PID, pid)
			continue
		}
		t.codes[n] = newCode()
		fmt.Fprint(t.tty, cardText(n, r, t.codes[n]))
	}
	var gone []int
	for n, r := range t.cards {
		if !live[r.ID] {
			gone = append(gone, n)
		}
	}
	if len(gone) == 0 {
		return
	}
	sort.Ints(gone)
	outcomes := map[string]approval.Decision{}
	for _, d := range t.b.Decisions() {
		if _, seen := outcomes[d.RequestID]; !seen {
			outcomes[d.RequestID] = d
		}
	}
	for _, n := range gone {
		r := t.cards[n]
		delete(t.cards, n)
		delete(t.byID, r.ID)
		delete(t.codes, n)
		delete(t.wrong, n)
		fmt.Fprintf(t.tty, "[%d] %s.\n", n, endedWords(outcomes[r.ID]))
	}
}

// endedWords says how a card this terminal showed ended: the one line the
// person reads about it, whether it was answered here, in the app or from
// a notification, or withdrawn.
func endedWords(d approval.Decision) string {
	where := ""
	switch d.Surface {
	case approval.SurfaceApp:
		where = " in the app"
	case approval.SurfaceNotification:
		where = " from a notification"
	}
	switch d.Outcome {
	case approval.OutcomeApproved:
		return "approved" + where
	case approval.OutcomeDenied:
		return "denied" + where
	case approval.OutcomeRefused:
		return "approved" + where + ", but it could not take effect (the vault changed, the agent left or the audit log refused it); the agent was refused"
	case approval.OutcomeExpired:
		return "expired: nobody answered in time, and the agent was refused"
	case approval.OutcomeWithdrawn:
		return "withdrawn: " + approval.WithdrawnWords(d.Reason)
	}
	return "closed"
}

// cardText is card n as the terminal shows it. Much of it is the agent's
// to choose (its process name, command line and executable path, the
// call's target, a tool's arguments): every unprintable rune of it is
// escaped, so no card can move the cursor, clear the screen or draw a
// card of its own on the person's terminal.
func cardText(n int, r approval.Request, code string) string {
	lines := strings.Split(cardLines(n, r, code), "\n")
	for i, l := range lines {
		lines[i] = terminalSafe(l)
	}
	return strings.Join(lines, "\n")
}

func cardLines(n int, r approval.Request, code string) string {
	var b strings.Builder
	if r.Kind == approval.KindSession {
		fmt.Fprintf(&b, "\n[%d] Approve this agent run? (%s)\n", n, r.Change)
		if r.ChangeDetail != "" {
			fmt.Fprintf(&b, "    changed: %s\n", r.ChangeDetail)
		}
	} else if r.Kind == approval.KindAccess {
		fmt.Fprintf(&b, "\n[%d] An agent asks for access\n", n)
	} else {
		fmt.Fprintf(&b, "\n[%d] Approve this one call?\n", n)
	}
	fmt.Fprintf(&b, "    who:     %s (pid %d, %s)\n", r.Who.Name, r.Who.PID, r.Who.Signer)
	fmt.Fprintf(&b, "    program: %s %s\n", r.Who.Executable, r.Who.ExeSHA256)
	var parents []string
	for _, p := range r.Who.Parents {
		parents = append(parents, fmt.Sprintf("%s (%d)", p.Name, p.PID))
	}
	if len(parents) > 0 {
		fmt.Fprintf(&b, "    started by: %s\n", strings.Join(parents, " <- "))
	}
	if r.Who.ShimPID != 0 {
		fmt.Fprintf(&b, "    through: yett mcp (pid %d), started by %s (pid %d): %s\n", r.Who.ShimPID,
			r.Who.ShimParentName, r.Who.ShimParentPID, r.Who.ShimParentCmdLine)
	}
	if text, ok := r.Who.StdioWords(); text != "" {
		mark := "ok"
		if !ok {
			mark = "WARNING"
		}
		fmt.Fprintf(&b, "    stdio:   %s %s\n", mark, text)
	}
	switch r.Kind {
	case approval.KindAccess:
		fmt.Fprintf(&b, "    asks for: %s, which Yett does not hold for it\n    because: %s\n", approval.AccessWords(r.Channel, r.Target), r.Reason)
		fmt.Fprintf(&b, "    (y tells the agent it is set up, n refuses; nothing is given either way, and yett serve\n     cannot add a credential while it runs: stop it and use yett credential add, or the app)\n")
	case approval.KindSession:
		fmt.Fprintf(&b, "    wants:   to use Yett's %s credentials for as long as this process runs (first call: %s)\n", r.Channel, r.Target)
	default:
		if r.Tool != "" {
			fmt.Fprintf(&b, "    wants:   to call the tool %s of the %s, with these arguments, sent exactly as shown", terminalSafe(r.Tool), terminalSafe(r.Credential))
			if r.ArgumentsBytes > len(r.Arguments) {
				fmt.Fprintf(&b, " (%d bytes; the start of them)", r.ArgumentsBytes)
			}
			fmt.Fprintf(&b, ":\n")
			for _, line := range strings.Split(r.Arguments, "\n") {
				fmt.Fprintf(&b, "             %s\n", terminalSafe(line))
			}
			break
		}
		fmt.Fprintf(&b, "    wants:   %s %s with credential %q\n", r.Method, r.Target, r.Credential)
	}
	fmt.Fprintf(&b, "    answer:  y %d %s  or  n %d   (within %s; the code is for this card only)\n", n, code, n, time.Until(r.Deadline).Round(time.Second))
	if r.GrantWords != "" {
		fmt.Fprintf(&b, "    or:      g %d %s  approves it and lets %s (same run, same credential) go without a card for %d minutes\n",
			n, code, r.GrantWords, int(approval.GrantDuration/time.Minute))
	}
	return b.String()
}

// inOurSession reports the first process of who's chain (the asker, the
// shim, the process that started the shim, and every ancestor of the
// asker) that is in this process's session, which can type into this
// terminal. A helper started with setsid leaves the session, but its
// parent, the agent, does not.
func inOurSession(who approval.Requester) (int, bool) {
	pids := []int{who.PID, who.ShimPID, who.ShimParentPID}
	for _, p := range who.Parents {
		pids = append(pids, p.PID)
	}
	for _, pid := range pids {
		if pid > 1 && sameSession(pid) {
			return pid, true
		}
	}
	return 0, false
}

// sameSession reports whether pid is in this process's session (shares
// the controlling terminal).
func sameSession(pid int) bool {
	theirs, err := unix.Getsid(pid)
	if err != nil {
		return false
	}
	ours, err := unix.Getsid(0)
	return err == nil && theirs == ours
}

// commands reads the terminal line by line until quit or EOF.
func (t *terminal) commands(quit chan<- struct{}) {
	defer close(quit)
	in := bufio.NewScanner(t.tty)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "y" && len(f) == 3:
			t.approve(f[1], f[2], false)
		case f[0] == "g" && len(f) == 3:
			t.approve(f[1], f[2], true)
		case f[0] == "y" && len(f) == 2:
			fmt.Fprintf(t.tty, "Type the card's code too: y %s CODE (the code is on the card).\n", f[1])
		case f[0] == "n" && len(f) == 2:
			t.answer(f[1], false, "")
		case f[0] == "sessions":
			t.listSessions()
		case f[0] == "revoke" && len(f) == 2 && strings.HasPrefix(f[1], "g"):
			t.revokeGrant(strings.TrimPrefix(f[1], "g"))
		case f[0] == "revoke" && len(f) == 2:
			t.revoke(f[1])
		case f[0] == "lock":
			if err := t.v.Lock("user"); err != nil {
				fmt.Fprintln(t.tty, "Could not lock the vault.")
			} else {
				fmt.Fprintln(t.tty, "Vault locked: every call is refused until you unlock.")
			}
		case f[0] == "unlock":
			if err := t.unlock(); err != nil {
				fmt.Fprintln(t.tty, "Still locked.")
			} else {
				fmt.Fprintln(t.tty, "Vault unlocked. Earlier approvals ended; agents will ask again.")
			}
		case f[0] == "quit":
			return
		default:
			fmt.Fprint(t.tty, serveUsage)
		}
	}
}

// approve approves card num if code is its one-time code (with grant, for
// calls like it for a while too). Three wrong codes deny the card.
func (t *terminal) approve(num, code string, grant bool) {
	n, _ := strconv.Atoi(num)
	t.mu.Lock()
	want, ok := t.codes[n]
	right := ok && subtle.ConstantTimeCompare([]byte(strings.ToUpper(code)), []byte(want)) == 1
	tries := 0
	if ok && !right {
		t.wrong[n]++
		tries = t.wrong[n]
	}
	t.mu.Unlock()
	switch {
	case !ok:
		fmt.Fprintf(t.tty, "No open card %s.\n", num)
	case right && grant:
		t.answerGrant(num)
	case right:
		t.answer(num, true, "one-time code checked")
	case tries >= maxWrongCodes:
		fmt.Fprintf(t.tty, "[%d] wrong code %d times: denying it.\n", n, tries)
		t.answer(num, false, "")
	default:
		fmt.Fprintf(t.tty, "[%d] wrong code; type the code shown on card %d (%d more tries).\n", n, n, maxWrongCodes-tries)
	}
}

func (t *terminal) answer(num string, yes bool, checked string) {
	n, _ := strconv.Atoi(num)
	t.mu.Lock()
	r, ok := t.cards[n]
	t.mu.Unlock()
	if !ok {
		fmt.Fprintf(t.tty, "No open card %s.\n", num)
		return
	}
	detail := t.ttyName
	if checked != "" {
		detail += ", " + checked
	}
	err := t.b.AnswerVia(r.ID, yes, approval.Via{Surface: approval.SurfaceTerminal, Detail: detail})
	switch {
	case err == nil:
		// refresh prints how the card ended, once, when it leaves.
	case errors.Is(err, approval.ErrNotPending), errors.Is(err, approval.ErrWithdrawn):
		fmt.Fprintf(t.tty, "[%d] is no longer open (the agent exited, the vault changed or it timed out).\n", n)
	default:
		fmt.Fprintf(t.tty, "[%d] could not be approved: the audit log refused to record it.\n", n)
	}
}

// answerGrant approves card num and gives its run a grant for calls like
// it (the code was checked).
func (t *terminal) answerGrant(num string) {
	n, _ := strconv.Atoi(num)
	t.mu.Lock()
	r, ok := t.cards[n]
	t.mu.Unlock()
	if !ok {
		fmt.Fprintf(t.tty, "No open card %s.\n", num)
		return
	}
	err := t.b.AnswerGrant(r.ID, approval.Via{Surface: approval.SurfaceTerminal, Detail: t.ttyName + ", one-time code checked"})
	switch {
	case err == nil:
		fmt.Fprintf(t.tty, "[%d] approved, and %s go without a card for %d minutes (sessions lists it; revoke gN ends it).\n",
			n, r.GrantWords, int(approval.GrantDuration/time.Minute))
	case errors.Is(err, approval.ErrNotGrantable):
		fmt.Fprintf(t.tty, "[%d] cannot allow calls like it for a while: answer it with y or n.\n", n)
	case errors.Is(err, approval.ErrNotPending), errors.Is(err, approval.ErrWithdrawn):
		fmt.Fprintf(t.tty, "[%d] is no longer open (the agent exited, the vault changed or it timed out).\n", n)
	default:
		fmt.Fprintf(t.tty, "[%d] could not be approved: the audit log refused to record it.\n", n)
	}
}

func (t *terminal) listSessions() {
	ss, gs := t.b.Sessions(), t.b.Grants()
	t.mu.Lock()
	t.sess, t.grants = ss, gs
	t.mu.Unlock()
	if len(ss) == 0 {
		fmt.Fprintln(t.tty, "No approved sessions.")
	}
	for i, s := range ss {
		fmt.Fprintf(t.tty, "  %d. %s (pid %d, %s) %s since %s\n", i+1, s.Who.Name, s.Who.PID, s.Who.Signer, s.Channel, s.ApprovedAt.Local().Format(time.Kitchen))
		for j, g := range gs {
			if g.SessionID == s.ID {
				fmt.Fprintf(t.tty, "     g%d. %s with %q until %s, used %d times\n", j+1, g.Words, g.Credential, g.Until.Local().Format(time.Kitchen), g.Uses)
			}
		}
	}
}

func (t *terminal) revokeGrant(num string) {
	t.mu.Lock()
	ids := make([]string, len(t.grants))
	for i, g := range t.grants {
		ids[i] = g.ID
	}
	t.mu.Unlock()
	t.revokeNth(num, ids, t.b.RevokeGrant, "revoke gN", "That grant already ended.", "Grant g%d ended.\n")
}

func (t *terminal) revoke(num string) {
	t.mu.Lock()
	ids := make([]string, len(t.sess))
	for i, s := range t.sess {
		ids[i] = s.ID
	}
	t.mu.Unlock()
	t.revokeNth(num, ids, t.b.Revoke, "revoke N", "That session already ended.", "Session %d ended.\n")
}

// revokeNth ends the num-th of ids as the last "sessions" listed them.
func (t *terminal) revokeNth(num string, ids []string, end func(string) error, how, gone, done string) {
	n, _ := strconv.Atoi(num)
	if n < 1 || n > len(ids) {
		fmt.Fprintf(t.tty, "Type sessions first, then %s.\n", how)
		return
	}
	if err := end(ids[n-1]); err != nil {
		fmt.Fprintln(t.tty, gone)
		return
	}
	fmt.Fprintf(t.tty, done, n)
}

// controllingTerminal names this process's controlling terminal for the
// audit log's record of an answer ("/dev/pts/3"), from tty_nr in
// /proc/self/stat; "the controlling terminal" where that cannot be read.
func controllingTerminal() string {
	const fallback = "the controlling terminal"
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fallback
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state ppid pgrp session tty_nr ...
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 5 {
		return fallback
	}
	nr, err := strconv.ParseUint(f[4], 10, 32)
	if err != nil || nr == 0 {
		return fallback
	}
	major, minor := (nr>>8)&0xfff, (nr&0xff)|((nr>>12)&0xfff00)
	if major >= 136 && major <= 143 { // Unix98 ptys
		return fmt.Sprintf("/dev/pts/%d", (major-136)*256+minor)
	}
	return fmt.Sprintf("tty %d:%d", major, minor)
}

// tiocstiAllowed reports whether this kernel lets a process push input into
// its controlling terminal with TIOCSTI: Linux before 6.2 (and other
// systems) always do; later Linux kernels when dev.tty.legacy_tiocsti is 1.
func tiocstiAllowed() bool {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if err != nil {
		return true
	}
	return strings.TrimSpace(string(b)) != "0"
}

// terminalSafe shows text an agent chose (a tool's arguments) on the
// person's terminal without letting it act on the terminal: every rune
// that is not printable (escape sequences, bidirectional overrides) is
// written as its \u escape.
func terminalSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}
