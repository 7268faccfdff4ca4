// Package presence asks the operating system whether the person is at the
// computer before an approval takes effect: polkit on Linux (the password of
// the person's account, or whatever the desktop's polkit agent offers, a
// fingerprint among them), and, where this build has none, a Verifier that
// says so.
//
// # Why
//
// An agent is a program of the same user. On X11 any program can send key
// and button events to Yett's window (XTest), a notification server takes
// orders from any process of the session (dunst's dunstctl), and a program
// can own a free bus name. A click, a key or a notification's button is
// therefore never proof on its own that the person answered. The OS's own
// authentication dialog is: the agent can make it appear, but it cannot
// answer it without the person's password (polkit checks it through PAM, in
// a setuid helper the agent cannot impersonate).
//
// # Binding to one card
//
// Verify asks about one card and its answer is used for that card only:
// the broker releases the card it asked about, and no other. The polkit
// action Yett installs (build/linux/dev.yett.approve.policy) is auth_self,
// not auth_self_keep: polkit would otherwise keep an authorization for the
// Yett process for minutes, and any check in that time (a card an agent
// clicked, or one it made the person authenticate for by raising a prompt
// of its own) would pass without asking. Several cards are answered with
// one verification only when the person approves them together.
package presence

import (
	"context"
	"errors"
)

// Request is what one verification is about.
type Request struct {
	// Card is the approval request's id.
	Card string
	// Summary says in one line what approving does, for the OS's prompt
	// where it shows one ("claude (pid 4242) wants to use api.github.com").
	Summary string
}

// Errors Verify returns; their texts are safe to show.
var (
	// ErrNotVerified: the person did not verify (wrong password, cancelled,
	// or nobody answered).
	ErrNotVerified = errors.New("presence: the person was not verified")
	// ErrUnavailable: this computer cannot verify the person now (no polkit,
	// no authentication agent, not built for this OS).
	ErrUnavailable = errors.New("presence: system verification is not available")
)

// Verifier asks the OS to verify the person.
type Verifier interface {
	// Verify returns what verified the person ("polkit: the password of
	// ana"), or ErrNotVerified, ErrUnavailable or ctx's error.
	Verify(ctx context.Context, r Request) (string, error)
	// Available says whether Verify can ask here, and if not, why, in
	// words for Settings.
	Available(ctx context.Context) (bool, string)
}

// None is the Verifier of a platform this build cannot verify on.
type None struct{ Why string }

func (n None) Verify(context.Context, Request) (string, error) { return "", ErrUnavailable }

func (n None) Available(context.Context) (bool, string) { return false, n.Why }
