//go:build windows

package main

import (
	"context"
	"errors"
)

// yett serve reads the passphrase and answers approval cards at the
// controlling terminal (/dev/tty, with echo turned off through termios), and
// refuses agents in its own terminal session by their Unix session id;
// Windows has neither, and a console counterpart (CONIN$, console session
// checks) is not written. The gateway itself does run on Windows, inside the
// app, on its named pipe.
func init() {
	commands["serve"] = command{
		summary: "run the gateway without a window (not available on Windows: use the app)",
		run:     runServe,
	}
}

var errServeWindows = errors.New("serve: not available on Windows yet: it answers approvals at a Unix terminal (/dev/tty). Start the Yett app instead; `yett mcp` reaches its gateway")

func runServe(context.Context, *Env, []string) error {
	return withExitCode(2, errServeWindows)
}
