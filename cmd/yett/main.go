// Command yett is Yett's command line: the MCP shim agents start (`yett mcp`),
// the headless gateway (`yett serve`), the headless setup of what it serves
// (`yett init`, `yett credential`, `yett connect`, `yett accounts`,
// `yett operation`), the offline audit verifier (`yett audit ...`) and the
// controlled receiver for release drills (`yett receiver`).
//
// Each subcommand lives in its own file and registers itself in commands; main
// only parses the first argument and hands over to a Run function that takes
// its inputs and outputs as parameters, so tests can drive it in-process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/yettdev/yett/backend/selfprotect"
	"github.com/yettdev/yett/backend/version"
)

// command is one subcommand of yett.
type command struct {
	summary string
	// usage is what `yett NAME --help` and `yett help NAME` print on
	// stdout (and the man page's text for NAME); empty where the command
	// does not exist on this system (the Windows stand-ins).
	usage string
	run   func(ctx context.Context, env *Env, args []string) error
}

// commands is filled by init functions in the subcommand files.
var commands = map[string]command{}

// Env carries the process's standard streams and environment lookups so a
// subcommand never reaches for os.* directly.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// exitError lets a subcommand choose its exit code (for example
// `yett audit verify`: 1 tampered, 2 unreadable).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// withExitCode wraps err so Run exits with code.
func withExitCode(code int, err error) error { return &exitError{code: code, err: err} }

func main() {
	// Before anything can unlock the vault or read a secret, the process is
	// closed to the user's other processes (an agent among them). Not the
	// shim: it holds no secret, and the gateway reads its /proc entries.
	if len(os.Args) < 2 || os.Args[1] != "mcp" {
		if err := selfprotect.Harden(); err != nil {
			fmt.Fprintf(os.Stderr, "yett: error: %v\n", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	code := Run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// Run executes one yett subcommand and returns the process exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	// `yett help serve` and `yett serve --help` print serve's usage on
	// stdout and exit 0, before the command does anything: no directory,
	// socket, terminal or vault is touched (TestHelpOfEveryCommand).
	if len(args) == 2 {
		name := ""
		switch {
		case args[0] == "help":
			name = args[1]
		case args[1] == "--help" || args[1] == "-h":
			name = args[0]
		}
		if cmd, ok := commands[name]; ok && cmd.usage != "" {
			fmt.Fprint(env.Stdout, cmd.usage)
			return 0
		}
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintf(env.Stdout, "yett %s\n", version.String())
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "yett: error: unknown command %q\n", args[0])
		usage(env.Stderr)
		return 2
	}
	err := cmd.run(ctx, env, args[1:])
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0 // -h prints the subcommand's usage, which is not an error
	}
	fmt.Fprintf(env.Stderr, "yett: error: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: yett <command> [arguments]")
	fmt.Fprintln(w, "       yett --version")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-11s %s\n", name, commands[name].summary)
	}
}
