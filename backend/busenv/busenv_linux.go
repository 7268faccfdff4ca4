package busenv

import "os"

// Only Linux libraries autolaunch: godbus on macOS asks launchd for an
// existing bus, and Windows has no session bus Yett uses.
func init() {
	value, change := Pinned(os.Getenv(Variable), os.Getenv("XDG_RUNTIME_DIR"), func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode()&os.ModeSocket != 0
	})
	if change {
		os.Setenv(Variable, value)
	}
}
