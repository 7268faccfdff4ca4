package keeper

import (
	"slices"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/vault"
)

// BenchmarkNotificationLatency measures, on the private desktop of the
// tests above (real dunst, real agent through the real shim), the issue's
// two figures, one run per iteration (go test -bench NotificationLatency
// -benchtime 50x for the note's 50 runs):
//
//   - card-to-bus: from a per-call card's creation (Request.CreatedAt) to
//     the Notify call for it on the session bus, as a bus monitor sees it;
//   - action-to-release: from dunst's ActionInvoked on the bus (the person
//     picked Approve) to the agent's call arriving at the loopback receiver.
//
// Both are reported as medians in milliseconds.
func BenchmarkNotificationLatency(b *testing.B) {
	d := newDesk(b, true, vault.ApprovalPerCall)
	seen := monitorBus(b, d.bus)
	a := startAgent(b, d.runDir)
	a.call("http://" + d.recv.addr + "/warm-up")
	d.card(approval.KindSession)
	d.dunst.Invoke("Approve")
	d.card(approval.KindCall)
	d.dunst.Invoke("Approve")
	if r := a.reply(); r.IsError || r.Err != "" {
		b.Fatalf("agent reply %+v", r)
	}
	<-d.recv.arrived
	d.waitFor("the warm-up's notifications to close", func() bool { return d.dunst.Displayed() == 0 })
	drain(seen)

	var toBus, toRelease []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.call("http://" + d.recv.addr + "/measured")
		c := d.card(approval.KindCall)
		shown := nextOn(b, seen, "Notify")
		d.dunst.Invoke("Approve")
		invoked := nextOn(b, seen, "ActionInvoked")
		var arrived time.Time
		select {
		case arrived = <-d.recv.arrived:
		case <-time.After(60 * time.Second):
			b.Fatal("the approved call never reached the receiver")
		}
		if r := a.reply(); r.IsError || r.Err != "" {
			b.Fatalf("agent reply %+v", r)
		}
		toBus = append(toBus, ms(shown.Sub(c.CreatedAt)))
		toRelease = append(toRelease, ms(arrived.Sub(invoked)))
		d.waitFor("the answered card's notification to close", func() bool { return d.dunst.Displayed() == 0 })
		drain(seen)
	}
	b.StopTimer()
	b.ReportMetric(median(toBus), "ms-card-to-bus")
	b.ReportMetric(median(toRelease), "ms-action-to-release")
	b.ReportMetric(0, "ns/op") // one run is mostly the menu dunst opens: not a figure
}

// busEvent is a message a monitor saw, and when.
type busEvent struct {
	member string
	at     time.Time
}

// monitorBus watches the bus at addr for Notify calls and ActionInvoked
// signals (org.freedesktop.DBus.Monitoring).
func monitorBus(tb testing.TB, addr string) <-chan busEvent {
	tb.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	rules := []string{
		"type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
		"type='signal',interface='org.freedesktop.Notifications',member='ActionInvoked'",
	}
	if err := conn.BusObject().Call("org.freedesktop.DBus.Monitoring.BecomeMonitor", 0, rules, uint32(0)).Err; err != nil {
		tb.Fatal(err)
	}
	// From here on every message is a monitored one (the bus sends a
	// monitor nothing else), so none is lost to godbus' own dispatch.
	raw := make(chan *dbus.Message, 256)
	conn.Eavesdrop(raw)
	out := make(chan busEvent, 256)
	go func() {
		for m := range raw {
			at := time.Now()
			if member, ok := m.Headers[dbus.FieldMember].Value().(string); ok {
				out <- busEvent{member: member, at: at}
			}
		}
	}()
	return out
}

func nextOn(tb testing.TB, ch <-chan busEvent, member string) time.Time {
	tb.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.member == member {
				return e.at
			}
		case <-deadline:
			tb.Fatalf("no %s on the bus", member)
		}
	}
}

func drain(ch <-chan busEvent) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
