//go:build linux

package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite"

	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
	"github.com/yettdev/yett/internal/testsupport/oauthtest"
)

// TestServeRunsDueUnattendedDrills: yett serve keeps the owner inventory
// as the app does: an unattended drill that came due while no Yett ran
// (the account was connected 100 days ago) runs once the vault is
// unlocked, and its verdict shows on serve's terminal.
func TestServeRunsDueUnattendedDrills(t *testing.T) {
	p := oauthtest.New(t, oauthtest.Options{ClientSecret: serveOAuthSecret})
	seed := seedOperation(t, p)
	w := startServeSeeded(t, func(dataDir string, v *vault.Vault) {
		seed(dataDir, v)
		db, err := sql.Open("sqlite", filepath.Join(dataDir, oauth.FileName))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`UPDATE oauth_authorizations SET connected_at = ?`, time.Now().Add(-100*24*time.Hour).Unix()); err != nil {
			t.Fatal(err)
		}
	})
	w.typeLine(t, servePassphrase)
	w.tty.waitFor(t, "unattended drill of tracker")
	if out := w.tty.String(); !strings.Contains(out, "unattended drill of tracker") || !strings.Contains(out, "passed; it is active now") {
		t.Fatalf("serve's terminal after the due drill:\n%s\nstderr:\n%s", out, w.stderr.String())
	}
	w.typeLine(t, "quit")
	w.tty.waitFor(t, "yett serve: stopped")
	if code := waitExit(t, w.cmd); code != 0 {
		t.Fatalf("yett serve exited with %d; stderr:\n%s", code, w.stderr.String())
	}
	if strings.Contains(w.tty.String()+w.stderr.String(), serveOAuthSecret) {
		t.Error("the client secret reached serve's output")
	}
}
