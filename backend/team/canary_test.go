//go:build unix

package team_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/team"
	"github.com/yettdev/yett/internal/testsupport/pgtest"
)

// scanForSecrets reads every table of the team database as its superuser
// (every row, every column, as text) and PostgreSQL's own role catalog,
// and fails if any of m's secrets is there in any of the spellings a
// careless encoder would use: the canary credentials, the tokens the
// provider issued, the administrative password, and the machine's team
// password and signing key from its vault.
func scanForSecrets(t *testing.T, pg *pgtest.Server, db team.Database, m *machine, tokens []string) {
	t.Helper()
	secrets := map[string]string{
		"client secret": clientCanary, "API key": httpCanary, "administrative password": adminPassword, "canary prefix": "CANARY-",
	}
	for i, tok := range tokens {
		secrets["token "+string(rune('a'+i))] = tok
	}
	rec, err := m.v.Team().Open()
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range rec.Secrets {
		b := s.Bytes()
		secrets["team "+name] = string(b)
		secrets["team "+name+" (base64)"] = base64.StdEncoding.EncodeToString(b)
		secrets["team "+name+" (hex)"] = hex.EncodeToString(b)
	}
	rec.WipeSecrets()

	ctx := context.Background()
	su, err := pgx.Connect(ctx, pg.SuperuserURL(db.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	rows, err := su.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 9 {
		t.Fatalf("only %d tables to scan", len(tables))
	}
	var dump strings.Builder
	for _, tbl := range append(tables, "pg_catalog.pg_authid") {
		rows, err := su.Query(ctx, `SELECT t::text FROM `+tbl+` t`)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			dump.WriteString(s)
			dump.WriteByte('\n')
		}
	}
	all := dump.String()
	if !strings.Contains(all, m.host) {
		t.Fatalf("the scan read nothing of %s", m.host)
	}
	for name, s := range secrets {
		if len(s) >= 8 && strings.Contains(all, s) {
			t.Errorf("%s: the team database holds the %s", m.host, name)
		}
	}
}
