package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/yettdev/yett/backend/approval"
)

// maxParents is how many links of the process chain a notification shows.
const maxParents = 3

// Compose is the notification of card r: the card's own words (its
// headline, its sentence, who asks and what it wants to reach, the scope),
// and how to answer. answerable says whether the person's policy lets the
// notification answer it; when it does not, the notification says to
// open Yett. Nothing in it is secret: the card holds names, never a value
// or a request body, and no command line is shown.
func Compose(r approval.Request, answerable bool, now time.Time) Notification {
	return ComposeWhy(r, answerable, "you chose to answer this only in the Yett window", now)
}

// ComposeWhy is Compose with the reason a card is not answerable from the
// notification, in words for the person.
func ComposeWhy(r approval.Request, answerable bool, whyNot string, now time.Time) Notification {
	var b strings.Builder
	b.WriteString(r.Sentence())
	if r.ChangeDetail != "" {
		b.WriteString(" ")
		b.WriteString(upperFirst(r.ChangeDetail))
		b.WriteString(".")
	}
	b.WriteString("\n")
	b.WriteString(whoLine(r.Who))
	if text, ok := r.Who.StdioWords(); !ok && text != "" {
		b.WriteString("\nWarning: ")
		b.WriteString(text)
	}
	fmt.Fprintf(&b, "\nScope: %s.", r.Scope())
	if answerable {
		fmt.Fprintf(&b, "\nAnswer within %s, here or in Yett.", remaining(r.Deadline, now))
	} else {
		fmt.Fprintf(&b, "\nOpen Yett to answer (within %s): %s.", remaining(r.Deadline, now), whyNot)
	}
	return Notification{
		Card: r.ID, Title: clean(title(r)), Body: clean(b.String()), Answerable: answerable, Expires: r.Deadline,
	}
}

func title(r approval.Request) string {
	if r.Kind == approval.KindAccess {
		return fmt.Sprintf("%s asks for %s", r.Who.Program(), approval.AccessWords(r.Channel, r.Target))
	}
	if r.Kind == approval.KindCall {
		host, _ := r.CallTarget()
		return fmt.Sprintf("Approve %s to %s?", r.Method, host)
	}
	return fmt.Sprintf("%s: %s wants %s", r.Headline(), r.Who.Program(), r.Target)
}

// whoLine is the card's "who": program, pid, signer, and the nearest
// parents.
func whoLine(w approval.Requester) string {
	s := fmt.Sprintf("%s (pid %d), %s", w.Program(), w.PID, w.SignerWords())
	if len(w.Parents) > 0 {
		var links []string
		for i, p := range w.Parents {
			if i == maxParents {
				links = append(links, "…")
				break
			}
			name := p.Name
			if name == "" {
				name = "?"
			}
			links = append(links, fmt.Sprintf("%s (pid %d)", name, p.PID))
		}
		s += ", started by " + strings.Join(links, " ← ")
	}
	return s
}

func remaining(deadline, now time.Time) string {
	d := deadline.Sub(now).Round(time.Second)
	switch {
	case d <= 0:
		return "moments"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%d min %d s", int(d/time.Minute), int((d%time.Minute)/time.Second))
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// clean drops control characters other than newlines: a process name
// comes from whoever started the process.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' {
			return r
		}
		return -1
	}, s)
}

// clip bounds text that came from another process.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > 128 {
		s = strings.ToValidUTF8(s[:128], "") + "…"
	}
	return s
}
