//go:build !unix

package main

import (
	"io"
	"net"
)

// pollableStdio is env's stdin and stdout as they are: Windows' pipes have
// no such mode to change.
func pollableStdio(env *Env) (in io.Reader, out io.Writer, restore func()) {
	return env.Stdin, env.Stdout, func() {}
}

// pumpStdio is not available here: pipe copies with goroutines.
func pumpStdio(env *Env, conn net.Conn) (run func() (pumpEnd, error), restore func(), ok bool) {
	return nil, nil, false
}
