package audit

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	maybeCrashChild()
	os.Exit(m.Run())
}
