//go:build linux || freebsd || openbsd || netbsd

package autostart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// fileName is the entry in $XDG_CONFIG_HOME/autostart.
const fileName = "dev.yett.Yett.desktop"

func (e Entry) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// path follows the XDG Base Directory and Autostart specifications.
func (e Entry) path() (string, error) {
	dir := e.getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := e.getenv("HOME")
		if home == "" {
			return "", errors.New("autostart: neither XDG_CONFIG_HOME nor HOME is set")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "autostart", fileName), nil
}

func (e Entry) location() string {
	p, err := e.path()
	if err != nil {
		return "~/.config/autostart/" + fileName
	}
	return p
}

// desktopEntry is the entry's text (Desktop Entry Specification 1.4): the
// executable quoted as the spec says, started in the background.
func (e Entry) desktopEntry() string {
	return strings.Join([]string{
		"[Desktop Entry]",
		"Type=Application",
		"Version=1.4",
		"Name=Yett",
		"Comment=Keeps agents' credentials and asks before they use them",
		"Exec=" + quoteExec(e.Exe) + " " + BackgroundFlag,
		"Icon=yett",
		"Terminal=false",
		"X-GNOME-Autostart-enabled=true",
		"",
	}, "\n")
}

// quoteExec quotes an argument for an Exec key: inside double quotes, the
// characters ", `, $ and \ are escaped with a backslash, and % is doubled
// (a field code otherwise).
func quoteExec(arg string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", `$`, `\$`, `%`, `%%`)
	return `"` + r.Replace(arg) + `"`
}

// content is the file the entry writes; entryDirMode the mode of the
// directory it is written into when Yett creates it.
func (e Entry) content() string { return e.desktopEntry() }

const entryDirMode = 0o700
