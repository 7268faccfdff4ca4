package team

import (
	"errors"
	"strings"
	"testing"
)

// A database is named by a URL with a role and without a password; a
// remote one is reached with its certificate verified.
func TestParseDatabaseURL(t *testing.T) {
	for _, c := range []struct {
		in, want, role string
	}{
		{"postgres://admin@127.0.0.1:5433/team", "postgres://127.0.0.1:5433/team?sslmode=disable", "admin"},
		{"postgresql://admin@db.example.com/team", "postgres://db.example.com:5432/team?sslmode=verify-full", "admin"},
		{"postgres://admin@[::1]/t?sslmode=verify-full", "postgres://[::1]:5432/t?sslmode=verify-full", "admin"},
	} {
		d, role, err := ParseDatabaseURL(c.in)
		if err != nil || d.String() != c.want || role != c.role {
			t.Errorf("%s: %s %s %v", c.in, d, role, err)
		}
	}
	for _, in := range []string{
		"postgres://admin:CANARY-pw@db.example.com/team",
		"postgres://db.example.com/team",
		"postgres://admin@db.example.com/team?sslmode=disable",
		"postgres://admin@db.example.com/team?sslmode=require",
		"postgres://admin@db.example.com/team?host=/tmp",
		"mysql://admin@db.example.com/team",
		"postgres://admin@db.example.com:99999/team",
		"postgres://admin@db.example.com/",
	} {
		_, _, err := ParseDatabaseURL(in)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", in, err)
		} else if strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the error quotes the password", in)
		}
	}
}

// FuzzParseDatabaseURL: no URL makes it panic, quote a password, or let
// through an address Yett would not connect to.
func FuzzParseDatabaseURL(f *testing.F) {
	f.Add("postgres://admin@127.0.0.1:5433/team")
	f.Add("postgres://admin:pw@db.example.com/team?sslmode=disable")
	f.Fuzz(func(t *testing.T, in string) {
		d, _, err := ParseDatabaseURL(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("not ErrInvalid: %v", err)
			}
			return
		}
		if d.check() != nil || strings.Contains(d.String(), "@") {
			t.Fatalf("accepted %q as %s", in, d)
		}
	})
}
