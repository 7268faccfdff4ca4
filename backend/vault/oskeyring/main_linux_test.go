package oskeyring_test

import (
	"os"
	"testing"

	"github.com/yettdev/yett/internal/testsupport/busguard"
)

// TestMain stops the session bus that 99designs/keyring's init may have
// autolaunched (busguard).
func TestMain(m *testing.M) {
	code := m.Run()
	busguard.StopAutolaunched()
	os.Exit(code)
}
