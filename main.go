// Yett's desktop app: the window, the vault and the gateway in one process.
// All wiring lives in package app; this file only starts it.
package main

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/wailsapp/wails/v2"

	"github.com/yettdev/yett/app"
	"github.com/yettdev/yett/backend/instance"
	"github.com/yettdev/yett/backend/selfprotect"
)

//go:embed all:frontend/dist
var dist embed.FS

func main() {
	if answered, code := app.CommandLine(os.Args[1:], os.Stdout); answered {
		os.Exit(code)
	}
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "yett: error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	// Before the vault can be unlocked: an agent of the same user must not
	// read this process's memory (backend/selfprotect).
	if err := selfprotect.Harden(); err != nil {
		return err
	}
	assets, err := fs.Sub(dist, "frontend/dist")
	if err != nil {
		return err
	}
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		return err
	}
	a, err := app.New(cfg)
	if errors.Is(err, instance.ErrAlreadyRunning) {
		fmt.Fprintln(os.Stderr, "yett: Yett is already running; its window was brought to the front")
		return nil
	}
	if err != nil {
		return err
	}
	return wails.Run(a.Options(assets))
}
