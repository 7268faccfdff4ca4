package sshaction

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Command rules narrow what agents may run on a host. With no rules, any
// command may be asked for (each still needs the person's approval, per
// call by default). With rules, a command that no rule allows is refused
// before Yett connects.
//
// The text form, one rule per line:
//
//	# a comment
//	systemctl status nginx          an exact command
//	exact: uptime                   the same, said explicitly
//	prefix: journalctl -u nginx     this command with more arguments
//	prefix+options: ls -l           the same, and the arguments may be options
//	read-only prefix: journalctl    any rule, marked as one that only reads
//
// "read-only " before a rule's kind (and only there: a bare line is an
// exact command, whatever its first word) marks the commands it allows as
// reads: on a host whose approval is "writes" they go on the run's session
// approval, and every other command asks on its own card (ReadsOnly).
//
// An exact rule allows the command byte for byte. A prefix rule allows the
// prefix itself, and the prefix followed by a space and arguments made only
// of letters, digits, spaces and _ - . / : = , @ % +: no quotes, no $, no
// globs, no ; & | < > ( ) ` \ ~ # !, so that a remote shell cannot turn
// "prefix: ls" into "ls; rm -rf ~". And none of the added arguments may
// begin with "-": options change what a command does (find -delete, tar
// --checkpoint-action=exec=..., git --output=..., journalctl
// --vacuum-time=...), so a prefix rule passes operands only, unless it is a
// prefix+options rule, which the person writes knowing that. Programs that
// read options without a dash (tar xf, ps aux, dd of=) are for exact
// rules.

// RuleKind is exact or prefix.
type RuleKind string

const (
	RuleExact  RuleKind = "exact"
	RulePrefix RuleKind = "prefix"
	// RulePrefixOptions is a prefix rule whose added arguments may be
	// options (begin with "-").
	RulePrefixOptions RuleKind = "prefix+options"
)

// Rule is one command rule.
type Rule struct {
	Kind    RuleKind `json:"kind"`
	Command string   `json:"command"`
	// ReadOnly is the person's word that what the rule allows only reads.
	ReadOnly bool `json:"read_only,omitempty"`
}

// readOnlyMark starts a rule the person marked as one that only reads.
const readOnlyMark = "read-only "

// Rules is a host's command rules; empty allows every command.
type Rules []Rule

// Bounds on rules and commands.
const (
	MaxRules      = 200
	MaxCommandLen = 8 << 10
	maxRulesText  = 256 << 10
)

// ErrRule is wrapped by every rule parse error; the message names the line
// and the rule broken, never the text.
var ErrRule = errors.New("ssh: command rules")

// ErrCommand is wrapped by every command check error.
var ErrCommand = errors.New("ssh: command")

// ParseRules reads the text form. Errors wrap ErrRule.
func ParseRules(text string) (Rules, error) {
	if len(text) > maxRulesText {
		return nil, fmt.Errorf("%w: the text is too long", ErrRule)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("%w: the text is not UTF-8", ErrRule)
	}
	var out Rules
	seen := map[Rule]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		readOnly := false
		if rest, ok := strings.CutPrefix(trimmed, readOnlyMark); ok {
			if k := strings.TrimSpace(rest); strings.HasPrefix(k, "exact:") || strings.HasPrefix(k, "prefix:") || strings.HasPrefix(k, "prefix+options:") {
				trimmed, readOnly = k, true
			}
		}
		r := Rule{Kind: RuleExact, Command: trimmed}
		switch {
		case strings.HasPrefix(trimmed, "exact:"):
			r.Command = strings.TrimSpace(strings.TrimPrefix(trimmed, "exact:"))
		case strings.HasPrefix(trimmed, "prefix:"):
			r = Rule{Kind: RulePrefix, Command: strings.TrimSpace(strings.TrimPrefix(trimmed, "prefix:"))}
		case strings.HasPrefix(trimmed, "prefix+options:"):
			r = Rule{Kind: RulePrefixOptions, Command: strings.TrimSpace(strings.TrimPrefix(trimmed, "prefix+options:"))}
		}
		r.ReadOnly = readOnly
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%w: line %d: %s", ErrRule, i+1, err.Error())
		}
		if seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
		if len(out) > MaxRules {
			return nil, fmt.Errorf("%w: at most %d rules", ErrRule, MaxRules)
		}
	}
	return out, nil
}

func (r Rule) check() error {
	if r.Kind != RuleExact && r.Kind != RulePrefix && r.Kind != RulePrefixOptions {
		return errors.New("a rule is exact, prefix or prefix+options")
	}
	if r.Command == "" {
		return errors.New("the rule names no command")
	}
	if strings.Contains(r.Command, "\n") {
		return errors.New("a rule is one line")
	}
	return checkText(r.Command)
}

// Check validates rules that came from storage. Errors wrap ErrRule.
func (rs Rules) Check() error {
	if len(rs) > MaxRules {
		return fmt.Errorf("%w: at most %d rules", ErrRule, MaxRules)
	}
	for i, r := range rs {
		if err := r.check(); err != nil {
			return fmt.Errorf("%w: rule %d: %s", ErrRule, i+1, err.Error())
		}
	}
	return nil
}

// String is the text form ParseRules reads back to the same rules.
func (rs Rules) String() string {
	var b strings.Builder
	for _, r := range rs {
		if r.ReadOnly {
			b.WriteString(readOnlyMark)
		}
		fmt.Fprintf(&b, "%s: %s\n", r.Kind, r.Command)
	}
	return b.String()
}

// Allows says whether cmd may be asked for: always when there are no
// rules, else when a rule allows it.
func (rs Rules) Allows(cmd string) bool {
	if len(rs) == 0 {
		return true
	}
	for _, r := range rs {
		if r.allows(cmd) {
			return true
		}
	}
	return false
}

// ReadsOnly says whether a rule marked read-only allows cmd (never with no
// rules: nothing then says what only reads).
func (rs Rules) ReadsOnly(cmd string) bool {
	for _, r := range rs {
		if r.ReadOnly && r.allows(cmd) {
			return true
		}
	}
	return false
}

func (r Rule) allows(cmd string) bool {
	switch r.Kind {
	case RuleExact:
		return cmd == r.Command
	case RulePrefix, RulePrefixOptions:
		if cmd == r.Command {
			return true
		}
		rest, ok := strings.CutPrefix(cmd, r.Command+" ")
		return ok && plainArguments(rest) && (r.Kind == RulePrefixOptions || !hasOption(rest))
	}
	return false
}

// HasPrefixRules reports whether any rule lets an agent add arguments: with
// a session approval, each such command runs without a card.
func (rs Rules) HasPrefixRules() bool {
	for _, r := range rs {
		if r.Kind != RuleExact {
			return true
		}
	}
	return false
}

// hasOption: an argument of the plain arguments rest begins with "-".
func hasOption(rest string) bool {
	for _, arg := range strings.Fields(rest) {
		if strings.HasPrefix(arg, "-") {
			return true
		}
	}
	return false
}

// plainArguments: only what a POSIX shell passes through as it is.
func plainArguments(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte(" _-./:=,@%+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// CheckCommand validates a command an agent asks for: 1 to MaxCommandLen
// bytes of UTF-8, no NUL, no control characters but newline and tab, and
// no invisible or direction-changing characters, so that the command the
// approval card shows is the command that runs. Errors wrap ErrCommand and
// never quote it.
func CheckCommand(cmd string) error {
	if cmd == "" || len(cmd) > MaxCommandLen {
		return fmt.Errorf("%w must be 1 to %d bytes", ErrCommand, MaxCommandLen)
	}
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("%w is blank", ErrCommand)
	}
	if err := checkText(cmd); err != nil {
		return fmt.Errorf("%w: %s", ErrCommand, err.Error())
	}
	return nil
}

// checkText refuses what would make shown text differ from the bytes:
// invalid UTF-8, control characters but newline and tab, format characters
// (bidirectional overrides, zero-width characters), line and paragraph
// separators, and private-use or unassigned code points.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("must be UTF-8")
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return errors.New("contains a control character")
		case unicode.Is(unicode.Cf, r), r == '\u2028', r == '\u2029':
			return errors.New("contains an invisible or direction-changing character")
		case unicode.Is(unicode.Co, r), !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs):
			return errors.New("contains a character that cannot be shown")
		}
	}
	return nil
}
