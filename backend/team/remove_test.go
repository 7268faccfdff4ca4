//go:build unix

package team

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRemovedMemberCannotWrite: once the lead removes a member, its role
// no longer logs in, and a connection it held from before has lost every
// privilege (the administrative role may not end its session); its rows
// stay, marked removed, for the lead. Its unused invitations are
// withdrawn with it.
func TestRemovedMemberCannotWrite(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	ned := tt.join("ned", KindMember, "ned-pc")
	held := tt.conn(ned)
	if err := rawRow(ctx, held, ned.Machine, "az-1"); err != nil {
		t.Fatal(err)
	}
	pending, err := tt.admin.Invite(ctx, "ned", KindMember, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := tt.admin.Remove(ctx, "ned")
	if err != nil || len(removed) != 2 {
		t.Fatalf("removed %v, %v", removed, err)
	}
	refused(t, "a write on a connection held from before", rawRow(ctx, held, ned.Machine, "az-2"))
	if _, err := connect(ctx, ned.Database, ned.Machine, &ned.password); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("a new login of the removed machine: %v", err)
	}
	if _, err := Join(ctx, &pending, "ned-2", "test", func(*Credentials) error { return nil }); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("joining with the withdrawn invitation: %v", err)
	}
	lead := tt.conn(tt.lead)
	if n := count(ctx, t, lead, `SELECT count(*) FROM team_rows WHERE machine_id = $1`, ned.Machine); n != 1 {
		t.Fatalf("the lead sees %d of ned's rows", n)
	}
	if n := count(ctx, t, lead, `SELECT count(*) FROM team_machines WHERE machine_id = $1 AND removed_at IS NOT NULL`, ned.Machine); n != 1 {
		t.Fatal("ned's machine is not marked removed")
	}
	if _, err := tt.admin.Remove(ctx, tt.lead.Machine); !errors.Is(err, ErrInvalid) {
		t.Fatalf("removing the founding lead's own machine: %v", err)
	}
	if _, err := tt.admin.Remove(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing nobody: %v", err)
	}
}
