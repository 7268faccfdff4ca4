//go:build unix

package main

import (
	"context"
	"os"

	"github.com/yettdev/yett/backend/prompt"
)

// readSecretAt reads one line from the terminal tty with echo off, turned
// off before the prompt shows: a passphrase typed the moment the prompt
// appears (as a person who knows it does) is never echoed. Turning it off
// after the prompt, as golang.org/x/term's ReadPassword does, echoed it now
// and then.
func readSecretAt(tty *os.File, text string) ([]byte, error) {
	return prompt.Attach(tty).Secret(context.Background(), text)
}
