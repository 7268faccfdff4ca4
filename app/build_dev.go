//go:build dev

package app

import (
	"errors"
	"os"
)

// checkBuild refuses to run a dev build on a real vault. The Wails dev server
// exposes every bound method over a websocket without an origin check, so any
// web page could drive it: a dev build must only ever open a throwaway vault
// that the caller named explicitly.
func checkBuild(cfg Config) error {
	if os.Getenv("YETT_DEV_THROWAWAY_VAULT") != "1" || os.Getenv("YETT_DATA_DIR") == "" {
		return errors.New("this is a development build: it only runs with YETT_DEV_THROWAWAY_VAULT=1 and YETT_DATA_DIR set to a throwaway directory")
	}
	return nil
}
