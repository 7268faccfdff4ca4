package main

import (
	"fmt"
	"os"

	"golang.org/x/term"
)

// readSecretAt reads one line from the console with echo off. The console
// keeps what is typed until a read asks for it, and ReadPassword turns echo
// off before reading, so nothing typed after the prompt shows is echoed.
func readSecretAt(tty *os.File, text string) ([]byte, error) {
	fmt.Fprint(tty, text)
	p, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	return p, err
}
