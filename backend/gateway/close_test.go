//go:build unix

package gateway

import (
	"sync"
	"testing"

	"github.com/yettdev/yett/backend/audit"
)

// Close returns only once gateway_stopped is recorded, whoever else is
// closing the gateway at the same time. The keeper cancels Serve's context
// (whose AfterFunc calls Close) and calls Close itself, then closes the
// audit log: a Close that returned early while the other was still on its
// way to the log lost gateway_stopped (the app's
// TestAuditServiceRecordsVaultLockAndUnlock, now and then).
func TestCloseReturnsAfterGatewayStoppedIsRecorded(t *testing.T) {
	w := newWorld(t, worldOpts{})
	const closers = 8
	var wg sync.WaitGroup
	seen := make(chan int, closers)
	for range closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.gw.Close()
			n := 0
			for _, e := range auditEvents(t, w) {
				if e.Type == audit.EventGatewayStopped {
					n++
				}
			}
			seen <- n
		}()
	}
	wg.Wait()
	close(seen)
	for n := range seen {
		if n != 1 {
			t.Fatalf("a Close returned with %d gateway_stopped entries in the log, want 1", n)
		}
	}
}
