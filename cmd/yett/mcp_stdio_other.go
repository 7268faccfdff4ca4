//go:build !unix

package main

import "io"

// pollableStdio is env's stdin and stdout as they are: Windows' pipes have
// no such mode to change.
func pollableStdio(env *Env) (in io.Reader, out io.Writer, restore func()) {
	return env.Stdin, env.Stdout, func() {}
}
