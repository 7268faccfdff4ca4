package app

import (
	"errors"
	"log/slog"
	"regexp"
	"strings"
)

// shown is an error whose text is written for a person: the window shows
// it as it is. Every text the services choose themselves is one.
type shown string

func (s shown) Error() string { return string(s) }

// errCouldNot is what a person reads for an error nobody wrote for them;
// the error itself goes to the log.
const errCouldNot shown = "Yett could not complete this. Details are in the Yett log."

// known maps one of a backend package's documented errors to what a
// person reads: text, or when text is empty the error's own words (their
// package prefixes and an "invalid input:" removed, as a sentence). The
// backend packages guarantee their documented errors never quote a
// secret, a passphrase or a provider's body.
type known struct {
	err  error
	text string
}

// packagePrefix is "vault: ", "sshhost: ssh: "…: how a Go error names its
// package, not words for a person.
var packagePrefix = regexp.MustCompile(`\b(vault|oauth|operation|inventory|sshhost|ssh|providers|approval|target|upstream|team): `)

// publicError chooses the one text the window shows for err: a shown
// error as it is, the first of table's errors it wraps in that entry's
// words, and anything else logged (as what failed) and said generically.
func publicError(log *slog.Logger, what string, err error, table []known) error {
	if err == nil {
		return nil
	}
	var s shown
	if errors.As(err, &s) {
		return s
	}
	for _, k := range table {
		if !errors.Is(err, k.err) {
			continue
		}
		if k.text != "" {
			return shown(k.text)
		}
		return shown(wordsOf(err.Error()))
	}
	log.Error(what+" failed", "err", err)
	return errCouldNot
}

// wordsOf makes a documented error's text a sentence for a person:
// "oauth: invalid input: name must be …" reads "Name must be …".
func wordsOf(msg string) string {
	msg = packagePrefix.ReplaceAllString(msg, "")
	if rest, ok := strings.CutPrefix(msg, "invalid input: "); ok {
		msg = rest
	}
	return sentence(msg)
}

// sentence capitalises the first letter and ends the text with a period.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
