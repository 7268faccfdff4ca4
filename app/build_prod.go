//go:build !dev

package app

// checkBuild has nothing to check in a production build.
func checkBuild(Config) error { return nil }
