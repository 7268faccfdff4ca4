//go:build darwin

package autostart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// label names the launch agent; macOS lists it under Login Items ("Allow
// in the Background") in System Settings.
const label = "dev.yett.Yett"

func (e Entry) path() (string, error) {
	home := ""
	if e.Getenv != nil {
		home = e.Getenv("HOME")
	} else {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return "", errors.New("autostart: no home directory")
	}
	return filepath.Join(home, "Library", "LaunchAgents", label+".plist"), nil
}

func (e Entry) location() string {
	p, err := e.path()
	if err != nil {
		return "~/Library/LaunchAgents/" + label + ".plist"
	}
	return p
}

func (e Entry) plist() string {
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + label + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc(e.Exe) + `</string>
		<string>` + BackgroundFlag + `</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`
}

func (e Entry) enabled() (bool, error) {
	p, err := e.path()
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return string(b) == e.plist(), nil
}

func (e Entry) enable() error {
	p, err := e.path()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if err := os.WriteFile(p, []byte(e.plist()), 0o644); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}

func (e Entry) disable() error {
	p, err := e.path()
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}
