//go:build linux

package main

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/witness"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

const teamAdminPassword = "CANARY-cli-team-admin-3e9d"

// TestTeamCommands: a lead creates a team at the terminal (the
// administrative password typed, never in the URL), invites a member
// (the code shown at the terminal), the member joins by pasting it at a
// prompt (never as an argument), the code is worthless afterwards, the
// lead's status lists both machines, the member names the team's witness
// (and its status says so), and the lead removes the member.
func TestTeamCommands(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	su, err := pgx.Connect(ctx, pg.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE ROLE team_admin LOGIN CREATEROLE PASSWORD '` + teamAdminPassword + `'`,
		`CREATE DATABASE team OWNER team_admin`,
	} {
		if _, err := su.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	su.Close(ctx)
	dbURL := "postgres://team_admin@127.0.0.1:" + strconv.Itoa(pg.Port) + "/team"

	lead, member, thief := homeEnv(newHome(t)), homeEnv(newHome(t)), homeEnv(newHome(t))
	for _, env := range [][]string{lead, member, thief} {
		runSetup(t, env, nil, "init")
	}
	if out, code := run(t, lead, "team", "create", "--database", "postgres://team_admin:"+teamAdminPassword+"@127.0.0.1/team", "--name", "x", "--member", "y"); code != 2 ||
		!strings.Contains(out, "leave the password out of the URL") || strings.Contains(out, teamAdminPassword) {
		t.Fatalf("a password in the URL: exit %d, %s", code, out)
	}
	screen := runSetup(t, lead, func(r *ptyRun) {
		r.answer(t, "(not shown as you type): ", teamAdminPassword)
	}, "team", "create", "--database", dbURL, "--name", "platform", "--member", "lea")
	fp := regexp.MustCompile(`Founding lead key: (SHA256:[A-Za-z0-9+/]{43})`).FindStringSubmatch(screen)
	if !strings.Contains(screen, `Created team "platform"`) || fp == nil {
		t.Fatalf("create:\n%s", screen)
	}
	screen = runSetup(t, lead, nil, "team", "invite", "--member", "mia")
	code := regexp.MustCompile(`yett-team-1-[A-Za-z0-9_-]+`).FindString(screen)
	if code == "" || !strings.Contains(screen, fp[1]) {
		t.Fatalf("invite:\n%s", screen)
	}
	if out, exit := run(t, member, "team", "join", code); exit != 2 || strings.Contains(out, code) {
		t.Fatalf("a code as an argument: exit %d, %s", exit, out)
	}
	screen = runSetup(t, member, func(r *ptyRun) {
		r.answer(t, "Invitation code (not shown as you type): ", code)
	}, "team", "join")
	if !strings.Contains(screen, `Joined team "platform" as mia (member), founding lead key `+fp[1]) || strings.Contains(screen, code) {
		t.Fatalf("join:\n%s", screen)
	}
	r := startPTY(t, thief, yettBin, "team", "join")
	r.answer(t, "Yett vault passphrase: ", setupPassphrase)
	r.answer(t, "Invitation code (not shown as you type): ", code)
	r.expect(t, "refused this machine's login")
	if exit := r.wait(t); exit == 0 {
		t.Fatal("a used code joined a second machine")
	}
	wkey, err := witness.NewKey("witness.test/team")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"--url", "http://127.0.0.1:7380"}, {"--none", "--key", wkey.VerifierKey()}, {"--url", "127.0.0.1:7380", "--key", wkey.VerifierKey()}} {
		if out, exit := run(t, member, append([]string{"team", "witness"}, bad...)...); exit != 2 {
			t.Fatalf("team witness %v: exit %d, %s", bad, exit, out)
		}
	}
	screen = runSetup(t, member, nil, "team", "witness", "--url", "http://127.0.0.1:7380", "--key", wkey.VerifierKey())
	if !strings.Contains(screen, "submits this machine's audit checkpoints to "+wkey.VerifierKey()) {
		t.Fatalf("team witness:\n%s", screen)
	}
	screen = runSetup(t, member, nil, "team", "status")
	if !strings.Contains(screen, "submitted to the witness "+wkey.VerifierKey()+" at http://127.0.0.1:7380") {
		t.Fatalf("the member's status lacks the witness:\n%s", screen)
	}
	screen = runSetup(t, lead, nil, "team", "status")
	for _, want := range []string{`Team "platform"`, "lead of lea", "No witness is named", "MACHINE", " mia ", " lea ", "No revocation requests."} {
		if !strings.Contains(screen, want) {
			t.Fatalf("status lacks %q:\n%s", want, screen)
		}
	}
	screen = runSetup(t, lead, func(r *ptyRun) { r.answer(t, "[y/N] ", "y") }, "team", "remove", "mia")
	if !strings.Contains(screen, "Removed yett_") {
		t.Fatalf("remove:\n%s", screen)
	}
	screen = runSetup(t, lead, nil, "team", "status")
	if !strings.Contains(screen, "removed") {
		t.Fatalf("status after the removal:\n%s", screen)
	}
	screen = runSetup(t, member, func(r *ptyRun) { r.answer(t, "[y/N] ", "y") }, "team", "leave")
	if !strings.Contains(screen, `Left team "platform"`) {
		t.Fatalf("leave:\n%s", screen)
	}
	r = startPTY(t, member, yettBin, "team", "status")
	r.answer(t, "Yett vault passphrase: ", setupPassphrase)
	r.expect(t, "this machine is in no team")
	r.wait(t)
}

// run runs yett without a terminal and returns its output and exit code.
func run(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(yettBin, args...)
	cmd.Env = env
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}
