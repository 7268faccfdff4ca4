package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/yettdev/yett/backend/instance"
	"github.com/yettdev/yett/backend/userdir"
)

func init() {
	commands["quit"] = command{
		usage:   quitUsage,
		summary: "quit the Yett desktop app running in the background",
		run:     runQuit,
	}
}

// quitTimeout is how long `yett quit` waits for the app to be gone: it
// locks the vault and closes the audit log with a checkpoint first.
const quitTimeout = 30 * time.Second

const quitUsage = `usage: yett quit

Asks the Yett desktop app running for this user to quit, as its Quit menu
item does: the vault is locked, agents waiting on a card are refused, and
the gateway stops. It waits up to 30 s for the app to be gone.
`

// runQuit asks the desktop app (the instance holding the user's app lock)
// to quit, as its Quit menu item does: the vault is locked, agents waiting
// on a card are refused, and the gateway stops.
func runQuit(_ context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		fmt.Fprint(env.Stderr, quitUsage)
		return withExitCode(2, errors.New("yett quit takes no arguments"))
	}
	dir, err := userdir.RuntimeDir(env.Getenv)
	if err != nil {
		return err
	}
	err = instance.RequestQuit(dir, "app", quitTimeout)
	switch {
	case errors.Is(err, instance.ErrNotRunning):
		fmt.Fprintln(env.Stdout, "yett: the Yett app is not running")
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintln(env.Stdout, "yett: the Yett app quit (the vault is locked and its gateway stopped)")
	return nil
}
