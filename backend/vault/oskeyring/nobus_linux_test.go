package oskeyring_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/keyring"

	"github.com/yettdev/yett/backend/busenv"
	_ "github.com/yettdev/yett/backend/vault/oskeyring"
	"github.com/yettdev/yett/internal/testsupport/busguard"
)

const noBusChildEnv = "YETT_OSKEYRING_NO_BUS_CHILD"

// A process that links the keyring library (as the desktop app does) and
// starts without a session bus leaves no dbus-daemon behind: busenv's init
// runs before the library's, which then finds the bus disabled instead of
// running dbus-launch. The test first proves that it sees a bus
// dbus-launch leaves, then starts this test binary as the child, with the
// runtime's init trace on, and checks the order of the two inits, what the
// child found, and that nothing the child started is still running.
func TestStartWithoutABusLeavesNoBus(t *testing.T) {
	if os.Getenv(noBusChildEnv) != "" {
		fmt.Printf("address %q backends %v\n", os.Getenv(busenv.Variable), keyring.AvailableBackends())
		return
	}
	if _, err := exec.LookPath("dbus-launch"); err != nil {
		t.Fatalf("dbus-launch (Debian package dbus-x11) is what autolaunches a bus; without it this test proves nothing: %v", err)
	}
	env := noBusEnv(t)

	// Self-check: dbus-launch, with the child's environment, leaves a bus
	// the marker finds.
	self := busguard.NewMarker()
	launch := exec.Command("dbus-launch")
	launch.Env = append(env, self.Env())
	if out, err := launch.CombinedOutput(); err != nil {
		t.Fatalf("dbus-launch: %v\n%s", err, out)
	}
	if left := self.KillLeft(t); len(left) == 0 {
		t.Fatal("the marker did not find the bus dbus-launch left: this test could not fail")
	}

	mark := busguard.NewMarker()
	child := exec.Command(os.Args[0], "-test.run=^TestStartWithoutABusLeavesNoBus$", "-test.count=1", "-test.v")
	child.Env = append(env, mark.Env(), noBusChildEnv+"=1", "GODEBUG=inittrace=1")
	var stdout, stderr bytes.Buffer
	child.Stdout, child.Stderr = &stdout, &stderr
	err := child.Run()
	if left := mark.KillLeft(t); len(left) > 0 {
		t.Errorf("the child left %d processes running: %v", len(left), left)
	}
	if err != nil || !strings.Contains(stdout.String(), "--- PASS") {
		t.Fatalf("child: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if want := fmt.Sprintf("address %q", busenv.Disabled); !strings.Contains(stdout.String(), want) {
		t.Errorf("the child's bus address is not pinned to %s: %s", busenv.Disabled, stdout.String())
	}
	if strings.Contains(stdout.String(), string(keyring.SecretServiceBackend)) {
		t.Errorf("the keyring library reached a session bus: %s", stdout.String())
	}
	order := initOrder(stderr.String())
	pin, lib := slices.Index(order, "github.com/yettdev/yett/backend/busenv"), slices.Index(order, "github.com/99designs/keyring")
	if pin < 0 || lib < 0 || pin > lib {
		t.Errorf("busenv must init before the keyring library: busenv at %d, keyring at %d in %v", pin, lib, order)
	}
}

// noBusEnv is this process's environment with no way to find a session
// bus: no address, an empty runtime directory, no X display.
func noBusEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case busenv.Variable, "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "GODEBUG":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_RUNTIME_DIR="+t.TempDir())
}

// initOrder lists the packages GODEBUG=inittrace=1 reports, in the order
// their inits ran.
func initOrder(trace string) []string {
	var out []string
	for _, line := range strings.Split(trace, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			out = append(out, f[1])
		}
	}
	return out
}
