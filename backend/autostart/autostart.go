// Package autostart turns "Start Yett when I log in" on and off, the way
// each desktop expects: an XDG autostart entry on Linux, a launch agent
// (shown as a login item) on macOS, the Run key on Windows. It is off until
// the person turns it on, and Yett started this way starts in the
// background (--background): its window stays closed until it is needed.
package autostart

import "errors"

// BackgroundFlag is the argument the entry starts Yett with.
const BackgroundFlag = "--background"

// ErrUnsupported: this OS has no autostart Yett knows how to write.
var ErrUnsupported = errors.New("autostart: not supported on this operating system")

// Entry is this user's autostart entry for one Yett executable.
type Entry struct {
	// Exe is the desktop app's executable, an absolute path.
	Exe string
	// Getenv reads the environment (XDG_CONFIG_HOME, HOME); tests point it
	// at a temporary directory. nil means os.Getenv.
	Getenv func(string) string
}

// Enabled reports whether the entry exists and starts Exe.
func (e Entry) Enabled() (bool, error) { return e.enabled() }

// Enable writes the entry (replacing one for another executable).
func (e Entry) Enable() error {
	if e.Exe == "" {
		return errors.New("autostart: no executable to start")
	}
	return e.enable()
}

// Disable removes the entry; no entry is not an error.
func (e Entry) Disable() error { return e.disable() }

// Location says where the entry lives, for the person.
func (e Entry) Location() string { return e.location() }
