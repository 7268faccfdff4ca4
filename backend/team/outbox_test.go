//go:build unix

package team

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/yettdev/yett/backend/inventory"
)

// The outbox keeps order, queues a record again only when it changed,
// keeps only the newest waiting version of a row, and forgets everything
// of another membership.
func TestOutboxQueues(t *testing.T) {
	dir := t.TempDir()
	c := &Credentials{Membership: Membership{TeamID: "0123456789", Machine: "m1"}}
	o, err := openOutbox(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, q := range []struct {
		kind, key, body string
		want            bool
	}{
		{itemRow, "a", "1", true}, {itemDrill, "d1", "x", true}, {itemRow, "a", "1", false},
		{itemRow, "b", "1", true}, {itemRow, "a", "2", true}, {itemDrill, "d1", "x", false},
	} {
		got, err := o.queue(q.kind, q.key, []byte(q.body), now)
		if err != nil || got != q.want {
			t.Fatalf("queue %s %s %s: %v %v", q.kind, q.key, q.body, got, err)
		}
	}
	items, _ := o.next(10)
	var order []string
	for _, it := range items {
		order = append(order, it.Kind+":"+it.Key+"="+string(it.Payload))
	}
	if want := "[drill:d1=x row:b=1 row:a=2]"; jsonList(order) != want {
		t.Fatalf("outbox %v, want %s", order, want)
	}
	if err := o.done([]int64{items[0].Seq}); err != nil || o.waiting() != 2 {
		t.Fatalf("after done: %d waiting, %v", o.waiting(), err)
	}
	o.close()
	o, err = openOutbox(dir, &Credentials{Membership: Membership{TeamID: "0123456789", Machine: "m1"}})
	if err != nil || o.waiting() != 2 {
		t.Fatalf("reopened: %d waiting, %v", o.waiting(), err)
	}
	o.close()
	o, err = openOutbox(dir, &Credentials{Membership: Membership{TeamID: "9999999999", Machine: "m2"}})
	if err != nil || o.waiting() != 0 {
		t.Fatalf("another membership: %d waiting, %v", o.waiting(), err)
	}
	if keys, _ := o.sharedKeys(itemRow); len(keys) != 0 {
		t.Fatalf("another membership inherits %v", keys)
	}
	o.close()
}

func jsonList(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}

// Applying a row is idempotent: the same item twice leaves one row, and
// an older version arriving after a newer one (a resend after a lost
// acknowledgement) changes nothing; a tombstone keeps the row's last
// columns and marks it deleted.
func TestApplyRowIsIdempotent(t *testing.T) {
	tt := newTestTeam(t)
	ctx := context.Background()
	mia := tt.join("mia", KindMember, "mia-pc")
	c := tt.conn(mia)
	row := func(owner string) sharedRow {
		r, err := rowRecord(inventory.Row{ID: "az-1", Kind: "oauth", Name: "tracker", Owner: owner, State: "active", Scopes: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		r.sign(mia.key, mia.TeamID, mia.Machine)
		return r
	}
	apply := func(seq int64, r sharedRow) {
		t.Helper()
		b := &pgx.Batch{}
		queueRow(b, seq, r)
		if err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() }); err != nil {
			t.Fatal(err)
		}
	}
	owner := func() (string, int64, bool) {
		var o string
		var seq int64
		var deleted bool
		if err := c.QueryRow(ctx, `SELECT owner, seq, deleted FROM team_rows WHERE row_id = 'az-1'`).Scan(&o, &seq, &deleted); err != nil {
			t.Fatal(err)
		}
		return o, seq, deleted
	}
	apply(5, row("ana"))
	apply(5, row("ana"))
	apply(7, row("bo"))
	apply(5, row("ana"))
	if o, seq, _ := owner(); o != "bo" || seq != 7 {
		t.Fatalf("owner %s at %d, want bo at 7", o, seq)
	}
	gone := tombstone("az-1")
	gone.sign(mia.key, mia.TeamID, mia.Machine)
	apply(9, gone)
	apply(8, row("cy"))
	if o, seq, deleted := owner(); o != "bo" || seq != 9 || !deleted {
		t.Fatalf("after the tombstone: %s at %d, deleted %v", o, seq, deleted)
	}
	if n := count(ctx, t, c, `SELECT count(*) FROM team_rows`); n != 1 {
		t.Fatalf("%d rows", n)
	}
	var body string
	c.QueryRow(ctx, `SELECT row_json FROM team_rows`).Scan(&body)
	var back inventory.Row
	if err := json.Unmarshal([]byte(body), &back); err != nil || back.Owner != "bo" {
		t.Fatalf("the row's JSON: %s %v", body, err)
	}
}
