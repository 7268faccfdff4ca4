//go:build unix

package team

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCreateInviteJoin: the founding lead creates the team and is its
// first machine; a member joins with a code; the database keeps a hash of
// the code and never the password it carried; the code is worthless once
// used; the lead sees both machines and their keys.
func TestCreateInviteJoin(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	if !tt.lead.Lead() || !tt.lead.CanAdminister() || tt.lead.FoundingLeadKey != tt.lead.PublicKey {
		t.Fatalf("the founding lead: %+v", tt.lead.Membership)
	}
	inv, err := tt.admin.Invite(ctx, "mia", KindMember, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	code := inv.Code()
	text := append([]byte(nil), code.Bytes()...)
	code.Wipe()
	parsed, err := ParseCode(text)
	if err != nil {
		t.Fatal(err)
	}
	mia, err := Join(ctx, &parsed, "mia-desktop", "test", func(*Credentials) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer mia.Wipe()
	if mia.Kind != KindMember || mia.Member != "mia" || mia.TeamName != "platform" || mia.FoundingLeadKey != tt.lead.PublicKey {
		t.Fatalf("mia's membership: %+v", mia.Membership)
	}
	// The database keeps the code's hash, and no trace of its password.
	su := tt.superuser()
	var hash []byte
	var used *time.Time
	if err := su.QueryRow(ctx, `SELECT code_hash, used_at FROM team_invitations WHERE id = $1`, inv.ID).Scan(&hash, &used); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(text); !bytes.Equal(hash, sum[:]) || used == nil {
		t.Fatalf("the invitation row: hash %x used %v", hash, used)
	}
	// The code no longer logs in: joining password rotated.
	again, _ := ParseCode(text)
	if _, err := Join(ctx, &again, "thief", "test", func(*Credentials) error { return nil }); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("a second join with the same code: %v", err)
	}
	lc := tt.conn(tt.lead)
	rows, err := lc.Query(ctx, `SELECT machine_id, member, kind, hostname, public_key FROM team_machines ORDER BY joined_at`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, member, kind, host, key string
		rows.Scan(&id, &member, &kind, &host, &key)
		got = append(got, member+"/"+kind+"/"+host)
		if (member == "mia" && (id != mia.Machine || key != mia.PublicKey)) || (member == "lea" && key != tt.lead.PublicKey) {
			t.Errorf("machine %s: id %s key %s", member, id, key)
		}
	}
	if strings.Join(got, " ") != "lea/lead/lea-laptop mia/member/mia-desktop" {
		t.Fatalf("the lead sees %v", got)
	}
}

// TestJoinRefusesAnotherTeam: a code whose lead key fingerprint is not
// the database's founding lead key joins nothing, and its invitation
// stays unused.
func TestJoinRefusesAnotherTeam(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	inv, err := tt.admin.Invite(ctx, "mia", KindMember, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newSigningKey()
	inv.LeadKey = Fingerprint(other.Public())
	if _, err := Join(ctx, &inv, "mia", "test", func(*Credentials) error { return nil }); !errors.Is(err, ErrWrongTeam) {
		t.Fatalf("join with another lead's fingerprint: %v", err)
	}
	var used bool
	if err := tt.superuser().QueryRow(ctx, `SELECT used_at IS NOT NULL FROM team_invitations WHERE id = $1`, inv.ID).Scan(&used); err != nil || used {
		t.Fatalf("the invitation: used %v, %v", used, err)
	}
}

// TestExpiredOrWithdrawnInvitation: row-level security admits a machine
// only with an unused, unexpired invitation, whatever the client checks;
// a kept credential is not written when the join fails.
func TestExpiredOrWithdrawnInvitation(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	for _, c := range []struct{ name, change string }{
		{"expired", `UPDATE team_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`},
		{"withdrawn", `UPDATE team_invitations SET withdrawn_at = now() WHERE id = $1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := tt.admin.Invite(ctx, "mia", KindMember, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tt.superuser().Exec(ctx, c.change, inv.ID); err != nil {
				t.Fatal(err)
			}
			kept := false
			_, err = Join(ctx, &inv, "mia", "test", func(*Credentials) error { kept = true; return nil })
			if !errors.Is(err, ErrInvitationUsed) || kept {
				t.Fatalf("join: %v (kept %v)", err, kept)
			}
		})
	}
}

// TestCreateRefusesATeamDatabase: a second create on the same database
// makes nothing.
func TestCreateRefusesATeamDatabase(t *testing.T) {
	tt := newTestTeam(t)
	_, err := Create(context.Background(), CreateRequest{Database: tt.db, AdminRole: tt.adminRole, AdminPassword: adminSecret(),
		Name: "again", Member: "lea", Hostname: "h"}, func(*Credentials) error { return nil })
	if !errors.Is(err, ErrTeamExists) {
		t.Fatalf("second create: %v", err)
	}
}
