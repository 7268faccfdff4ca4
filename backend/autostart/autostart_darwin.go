//go:build darwin

package autostart

import (
	"encoding/xml"
	"errors"
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

// content is the file the entry writes; entryDirMode the mode of the
// directory it is written into when Yett creates it.
func (e Entry) content() string { return e.plist() }

const entryDirMode = 0o755
