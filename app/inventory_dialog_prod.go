//go:build !dev

package app

// devSaveDir: only a development build saves without asking.
func devSaveDir() func(title, name string) (string, error) { return nil }
