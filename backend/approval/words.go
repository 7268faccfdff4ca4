package approval

import (
	"fmt"

	"github.com/yettdev/yett/backend/procid"
)

// StdioWords says to the person who holds the shim's input and output: the
// process that writes into `yett mcp` is the one that acts, whoever started
// it. ok is true only when the agent holds both and nothing is amiss. The
// app's cards and `yett serve`'s terminal say the same words.
func (r Requester) StdioWords() (text string, ok bool) {
	starter := fmt.Sprintf("%s (pid %d)", orUnknown(r.ShimParentName), r.ShimParentPID)
	switch r.Stdio {
	case procid.StdioHeld:
		if r.ShimParentPID == r.PID {
			return "This process started yett mcp and holds its input and output.", true
		}
		return fmt.Sprintf("This process holds yett mcp's input and output; it started yett mcp through %s.", starter), true
	case procid.StdioHeldNotParent:
		return fmt.Sprintf("yett mcp was started by %s, but this process holds its input and output: this process asks, not the one that started yett mcp.", starter), false
	case procid.StdioNotHeld:
		return fmt.Sprintf("yett mcp was started by %s, which does not hold its input and output, and no single process Yett can name does: yett mcp asks for itself, for as long as it runs.", starter), false
	case procid.StdioNotChecked:
		return "Who holds yett mcp's input and output is not checked on this OS.", false
	}
	return "", false
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown process"
	}
	return s
}
