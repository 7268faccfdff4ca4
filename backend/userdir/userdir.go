// Package userdir says where Yett keeps its per-user files.
//
// The data directory holds the vault database, the audit log and the journal.
// It follows each OS's convention: $XDG_DATA_HOME/yett (default
// ~/.local/share/yett) on Linux and other Unix, ~/Library/Application
// Support/Yett on macOS, %AppData%\Yett on Windows. YETT_DATA_DIR overrides it,
// which is how tests and throwaway dev builds get a vault of their own.
//
// The runtime directory holds the gateway's socket: $XDG_RUNTIME_DIR/yett on
// Linux when set; otherwise the user's own runtime directory, /run/user/UID
// (systemd-logind makes it, owned by the user, mode 0700), when it exists
// and is private to the user; otherwise a "run" folder inside the data
// directory. YETT_RUNTIME_DIR overrides it. A client that starts `yett mcp`
// with a filtered environment (Codex keeps HOME, PATH and little else) so
// still finds the gateway a desktop session started: RuntimePlaces lists
// every place the shim tries, with what chose each.
//
// Both are created with mode 0700 by Ensure; a directory that exists with
// wider permissions is tightened, because other users must not even list it.
package userdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Getenv looks up an environment variable; os.Getenv in production.
type Getenv func(string) string

// DataDir returns Yett's per-user data directory (not created).
func DataDir(getenv Getenv) (string, error) {
	if d := getenv("YETT_DATA_DIR"); d != "" {
		return filepath.Abs(d)
	}
	home := getenv("HOME")
	switch runtime.GOOS {
	case "windows":
		if d := getenv("AppData"); d != "" {
			return filepath.Join(d, "Yett"), nil
		}
		return "", errors.New("userdir: %AppData% is not set")
	case "darwin":
		if home == "" {
			return "", errors.New("userdir: $HOME is not set")
		}
		return filepath.Join(home, "Library", "Application Support", "Yett"), nil
	default:
		if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "yett"), nil
		}
		if home == "" {
			return "", errors.New("userdir: neither $XDG_DATA_HOME nor $HOME is set")
		}
		return filepath.Join(home, ".local", "share", "yett"), nil
	}
}

// RuntimeDir returns the directory for the gateway's socket (not created):
// the first of RuntimePlaces.
func RuntimeDir(getenv Getenv) (string, error) {
	places, err := RuntimePlaces(getenv)
	if err != nil {
		return "", err
	}
	return places[0].Dir, nil
}

// A Place is a runtime directory and what chose it, in words for the
// person ("$XDG_RUNTIME_DIR").
type Place struct {
	Dir, Why string
}

// RuntimePlaces are the runtime directories where the gateway may listen,
// in the order the gateway chooses among them; `yett mcp` tries each. Every
// one is a directory of this user's alone, chosen from the user id and the
// platform's fixed places or from the environment the user gave; never a
// shared directory such as /tmp, where another user could make a socket.
func RuntimePlaces(getenv Getenv) ([]Place, error) {
	if d := getenv("YETT_RUNTIME_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		return []Place{{abs, "$YETT_RUNTIME_DIR"}}, nil
	}
	var out []Place
	add := func(dir, why string) {
		for _, p := range out {
			if p.Dir == dir {
				return
			}
		}
		out = append(out, Place{dir, why})
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
			add(filepath.Join(d, "yett"), "$XDG_RUNTIME_DIR")
		}
		if d, ok := userRuntimeDir(); ok {
			add(filepath.Join(d, "yett"), "the user's runtime directory")
		}
	}
	data, err := DataDir(getenv)
	if err != nil {
		if len(out) > 0 {
			return out, nil
		}
		return nil, err
	}
	add(filepath.Join(data, "run"), "the data directory")
	return out, nil
}

// Ensure creates dir (and parents) and makes sure it is private to the user.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("userdir: create %s: %w", dir, err)
	}
	if runtime.GOOS == "windows" {
		return nil // ACLs of %AppData% are already per-user
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("userdir: %w", err)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("userdir: tighten %s: %w", dir, err)
		}
	}
	return nil
}
