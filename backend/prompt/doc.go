// Package prompt asks the person at the controlling terminal, for the yett
// CLI's setup commands (init, credential, connect, accounts, operation).
//
// # Who is there
//
// Open refuses unless a person could be typing: standard input must be this
// process's controlling terminal (tcgetpgrp answers only for that one), and
// the terminal must belong to the invoking user. A program that runs
// `yett credential add` with pipes, from cron, from an agent's shell tool or
// under another user's terminal is refused before anything is asked. This
// does not tell a person from a program that allocated a terminal of its own
// (a pty): the threat model says so.
//
// # What is read, and where
//
// Prompts, passphrases, secrets and answers go through the controlling
// terminal (/dev/tty), never standard output, so a redirected output never
// holds them. Passphrases and secrets are read with echo turned off before
// the prompt is shown, and the terminal's settings are restored afterwards,
// also when the read is interrupted. A secret may instead come from a file
// descriptor the person names (ReadFD: `--secret-fd 3 3<file`); never from
// the command line or the environment, which other processes of the user can
// read (/proc/<pid>/cmdline, /proc/<pid>/environ) and shells keep in history.
package prompt

import "errors"

// ErrNoTerminal: standard input is not the invoking user's controlling
// terminal. Its text is written for the person.
var ErrNoTerminal = errors.New("this command takes its answers from a person at a terminal: run it in an interactive terminal of your own (not through a pipe, a script or another user's session)")

// ErrInterrupted: the person interrupted a prompt (Ctrl-C) or its context
// ended.
var ErrInterrupted = errors.New("interrupted")

// ErrTooLong: a secret read from a file descriptor was longer than allowed.
var ErrTooLong = errors.New("the secret is too long")
