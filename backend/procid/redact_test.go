package procid

import (
	"strings"
	"testing"
)

func TestRedactArgs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"claude --resume", "claude --resume"},
		{"node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js --model sonnet", "node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js --model sonnet"},
		{"agent --token=CANARY-approval-5d1c0b7e", "agent --token=[hidden]"},
		{"agent --api-key sk-live-0123 --verbose", "agent --api-key [hidden] --verbose"},
		{"agent --password", "agent --password"},
		{"env GITHUB_TOKEN=ghp_x run", "env GITHUB_TOKEN=[hidden] run"},
		{"curl https://ana:hunter2@example.com/x", "curl https://ana:[hidden]@example.com/x"},
		{"git clone https://example.com/repo.git", "git clone https://example.com/repo.git"},
		{"tool ghp_16C7e42F292c6912E7710c838347Ae178B4a", "tool [hidden]"},
		{"tool --header=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123", "tool --header=[hidden]"},
		{"python3 /home/ana/projects/agent-2024/run_agent_v2.py", "python3 /home/ana/projects/agent-2024/run_agent_v2.py"},
	} {
		got := strings.Join(redactArgs(strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("redactArgs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
