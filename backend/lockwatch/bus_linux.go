package lockwatch

import (
	"github.com/godbus/dbus/v5"
)

// watchConn hands a subscribed connection to a goroutine that classifies its
// signals until ctx is done or the connection drops.
func (w *Watcher) watchConn(conn *dbus.Conn, ch <-chan *dbus.Signal, sources []Source, classify func(*dbus.Signal) Reason) {
	w.addSources(sources...)
	w.goWatch(func() {
		defer conn.Close()
		defer w.dropSources(sources...)
		for {
			select {
			case <-w.ctx.Done():
				return
			case sig, ok := <-ch:
				if !ok {
					return
				}
				if sig.Sender == "org.freedesktop.DBus" {
					// The daemon's own NameAcquired/NameLost reach
					// every connection regardless of match rules.
					continue
				}
				w.handle(sig.Name+"@"+string(sig.Path), classify(sig))
			}
		}
	})
}

// firstBool is the first argument of a signal if it is a boolean. Anything
// else, however malformed, reads as false: it cannot ask for a lock, and it
// cannot do anything else either.
func firstBool(body []any) bool {
	if len(body) == 0 {
		return false
	}
	b, ok := body[0].(bool)
	return ok && b
}
