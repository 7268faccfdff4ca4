//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
)

// TestCardTextEscapesWhatTheAgentChose: the fields of a card an agent
// controls (its process name, executable path, its parent's command line,
// the call's target, a tool's arguments) reach the terminal with every
// control sequence escaped: an agent cannot clear the screen, move the
// cursor or reverse text to draw a card of its own.
func TestCardTextEscapesWhatTheAgentChose(t *testing.T) {
	evil := "x\x1b[2J\x1b[H\u009b31m\u202e\a\rend"
	for _, r := range []approval.Request{
		{Kind: approval.KindSession, Channel: "http", Target: evil, Who: approval.Requester{Name: evil, Executable: "/tmp/" + evil,
			ShimPID: 7, ShimParentName: evil, ShimParentCmdLine: evil}, Deadline: time.Now().Add(time.Minute)},
		{Kind: approval.KindCall, Channel: "mcp_server", Method: "MCP", Target: "s.t", Tool: "s.t", Credential: "MCP server s",
			Arguments: "{\n  \"a\": \"" + evil + "\"\n}", Deadline: time.Now().Add(time.Minute)},
	} {
		text := cardText(1, r, "123456")
		for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\a", "\r"} {
			if strings.Contains(text, bad) {
				t.Fatalf("a control rune %q reached the terminal:\n%q", bad, text)
			}
		}
		if !strings.Contains(text, `x\u001b[2J`) || !strings.Contains(text, "answer:  y 1 123456") {
			t.Fatalf("the card does not show the escaped text or its answer line:\n%s", text)
		}
	}
}
