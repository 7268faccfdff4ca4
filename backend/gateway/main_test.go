//go:build unix

package gateway

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/yettdev/yett/internal/testsupport/yettbuild"
)

// yettBin is the real yett binary (`yett mcp` is the shim agents start).
var (
	yettBin    string
	yettSHA256 [32]byte
)

// testWait bounds every wait in these tests; settleWait is how long the
// tests keep watching the receiver after an unlock for a late replay.
var (
	testWait   = 30 * time.Second
	settleWait = flag.Duration("settle", 1500*time.Millisecond, "how long to watch the receiver after an unlock for late replays")
)

func TestMain(m *testing.M) {
	switch {
	case os.Getenv("YETT_TEST_AGENT") == "1":
		agentMain()
		os.Exit(0)
	case os.Getenv("YETT_TEST_GATEWAY") == "1":
		os.Exit(gatewayHelperMain())
	}
	dir, err := os.MkdirTemp("", "yett-gw-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	yettBin = filepath.Join(dir, "yett")
	build := yettbuild.Command("-o", yettBin, "github.com/yettdev/yett/cmd/yett")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building yett:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	b, err := os.ReadFile(yettBin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	yettSHA256 = sha256.Sum256(b)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
