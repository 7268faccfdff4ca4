package notify

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// toastXML is the toast: the card's title and body, and its buttons (or
// only "Open Yett" when the notification may not answer the card).
func toastXML(n Notification, nonce string) string {
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<toast launch="default" activationType="foreground" scenario="reminder">`)
	b.WriteString(`<visual><binding template="ToastGeneric">`)
	fmt.Fprintf(&b, `<text>%s</text><text>%s</text>`, esc(n.Title), esc(n.Body))
	b.WriteString(`</binding></visual><actions>`)
	if n.Answerable {
		fmt.Fprintf(&b, `<action content="Approve" arguments="approve-%s" activationType="foreground"/>`, nonce)
		fmt.Fprintf(&b, `<action content="Deny" arguments="deny-%s" activationType="foreground"/>`, nonce)
	} else {
		b.WriteString(`<action content="Open Yett" arguments="default" activationType="foreground"/>`)
	}
	b.WriteString(`</actions></toast>`)
	return b.String()
}
