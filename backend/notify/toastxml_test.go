package notify

import (
	"encoding/xml"
	"strings"
	"testing"
)

// The Windows toast carries the card's words as text (escaped, never
// markup) and its buttons with the card's nonce; a card the policy keeps
// in the window gets only "Open Yett".
func TestToastXML(t *testing.T) {
	n := Notification{Card: "rq-1", Title: `New agent: <evil> & co wants x`, Body: "line one\nline two", Answerable: true}
	doc := toastXML(n, "n0nce")
	var parsed struct {
		Scenario string   `xml:"scenario,attr"`
		Texts    []string `xml:"visual>binding>text"`
		Actions  []struct {
			Content   string `xml:"content,attr"`
			Arguments string `xml:"arguments,attr"`
		} `xml:"actions>action"`
	}
	if err := xml.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatalf("not XML: %v\n%s", err, doc)
	}
	if len(parsed.Texts) != 2 || parsed.Texts[0] != n.Title || parsed.Texts[1] != n.Body || parsed.Scenario != "reminder" {
		t.Fatalf("toast %+v", parsed)
	}
	if len(parsed.Actions) != 2 || parsed.Actions[0].Arguments != "approve-n0nce" || parsed.Actions[1].Arguments != "deny-n0nce" {
		t.Fatalf("actions %+v", parsed.Actions)
	}
	n.Answerable = false
	if doc := toastXML(n, "n0nce"); strings.Contains(doc, "approve-") || !strings.Contains(doc, `content="Open Yett"`) {
		t.Fatalf("window-only toast: %s", doc)
	}
}
