//go:build windows

package main

import (
	"context"
	"errors"
)

// The setup commands take passphrases, secrets and answers at a Unix
// controlling terminal (/dev/tty, echo off through termios, and the check
// that it is the invoking user's); a Windows console counterpart is not
// written. The app sets up everything on Windows.
func init() {
	for name, what := range map[string]string{
		"init": "create the vault", "credential": "manage HTTP credentials", "connect": "connect an OAuth account",
		"accounts": "list or revoke OAuth accounts", "operation": "manage named operations",
		"mcp-server": "manage upstream MCP servers", "witness": "run a team witness",
	} {
		commands[name] = command{
			summary: what + " at a terminal (not available on Windows: use the app)",
			run: func(context.Context, *Env, []string) error {
				return withExitCode(2, errors.New(name+": not available on Windows yet: it reads secrets at a Unix terminal. Use the Yett app"))
			},
		}
	}
}
