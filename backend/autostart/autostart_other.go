//go:build !linux && !freebsd && !openbsd && !netbsd && !darwin && !windows

package autostart

func (e Entry) enabled() (bool, error) { return false, nil }
func (e Entry) enable() error          { return ErrUnsupported }
func (e Entry) disable() error         { return nil }
func (e Entry) location() string       { return "" }
