//go:build linux || darwin

package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// On Linux and macOS the entry is one file (an XDG autostart entry, a
// launch agent): enabled when the file holds exactly what Yett writes,
// written whole (a temporary file renamed over it), removed to disable.

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
	return string(b) == e.content(), nil
}

func (e Entry) enable() error {
	p, err := e.path()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), entryDirMode); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(e.content()), 0o644); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
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
