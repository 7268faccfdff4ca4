//go:build dev

package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/yettdev/yett/backend/userdir"
)

// devMarker marks a data directory a development build created itself.
const devMarker = ".yett-dev-throwaway"

// checkBuild refuses to run a dev build anywhere near a real vault. The
// Wails dev server exposes every bound method over a websocket without an
// origin check, so any web page could drive it. A dev build therefore
// needs, besides YETT_DEV_THROWAWAY_VAULT=1:
//
//   - a data directory (YETT_DATA_DIR) that it created itself: empty or
//     absent the first time, when it is created and marked; afterwards it
//     must carry that mark. A directory holding anything else (a real vault,
//     a copy of one) is refused;
//   - a runtime directory (YETT_RUNTIME_DIR) of its own, never the user's
//     real one, so it never serves the real gateway socket agents dial, nor
//     takes the real app's single-instance lock.
func checkBuild(cfg Config) error {
	if os.Getenv("YETT_DEV_THROWAWAY_VAULT") != "1" || os.Getenv("YETT_DATA_DIR") == "" || os.Getenv("YETT_RUNTIME_DIR") == "" {
		return errors.New("this is a development build: it only runs with YETT_DEV_THROWAWAY_VAULT=1 and YETT_DATA_DIR and YETT_RUNTIME_DIR set to throwaway directories")
	}
	withoutOverrides := func(k string) string {
		if k == "YETT_DATA_DIR" || k == "YETT_RUNTIME_DIR" {
			return ""
		}
		return os.Getenv(k)
	}
	realData, err1 := userdir.DataDir(withoutOverrides)
	realRun, err2 := userdir.RuntimeDir(withoutOverrides)
	if err1 == nil && sameDir(cfg.DataDir, realData) || err2 == nil && sameDir(cfg.RuntimeDir, realRun) {
		return errors.New("this is a development build: it refuses the user's real Yett data and runtime directories")
	}
	return claimThrowaway(cfg.DataDir)
}

// claimThrowaway creates and marks dir when it is absent or empty, and
// accepts it afterwards only while it carries the mark.
func claimThrowaway(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, devMarker)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("development build: reading the data directory: %w", err)
	case len(entries) > 0:
		return errors.New("this is a development build: its data directory holds files it did not create (a real vault?); give it a new, empty directory")
	}
	if err := userdir.Ensure(dir); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, devMarker), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("development build: marking the data directory: %w", err)
	}
	f.WriteString("created by a Yett development build; it only ever opens throwaway vaults\n")
	return f.Close()
}

func sameDir(a, b string) bool {
	ca, err1 := filepath.Abs(a)
	cb, err2 := filepath.Abs(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	if ea, err := filepath.EvalSymlinks(ca); err == nil {
		ca = ea
	}
	if eb, err := filepath.EvalSymlinks(cb); err == nil {
		cb = eb
	}
	return ca == cb
}
