package gateway

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolError is an isError result whose text is chosen here, never an
// internal error's text.
func toolError(code, format string, args ...any) *mcp.CallToolResult {
	text := code
	if format != "" {
		text += ": " + fmt.Sprintf(format, args...)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func toolText(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

const lockedText = "the Yett vault is locked. This call was refused and is not kept: it will not run after unlock. Unlock Yett, then send a new call"
