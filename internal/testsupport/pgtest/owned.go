//go:build unix

package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
)

// OwnedDatabase makes an empty database owned by a new plain role with
// password (LOGIN CREATEROLE, not a superuser: the role a team's creator
// is given), and returns the role's and the database's names. Each call
// makes new ones, so tests on a Shared server do not meet.
func (s *Server) OwnedDatabase(t testing.TB, password string) (role, db string) {
	t.Helper()
	ctx := context.Background()
	su, err := pgx.Connect(ctx, s.SuperuserURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	b := make([]byte, 4)
	rand.Read(b)
	suffix := hex.EncodeToString(b)
	role, db = "yett_admin_"+suffix, "team_"+suffix
	for _, stmt := range []string{
		`CREATE ROLE ` + role + ` LOGIN CREATEROLE PASSWORD ` + quote(password),
		`CREATE DATABASE ` + db + ` OWNER ` + role,
	} {
		if _, err := su.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	return role, db
}

// quote is a SQL string literal of s.
func quote(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
