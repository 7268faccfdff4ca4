// Package busguard finds the processes a test's child left behind, such
// as a D-Bus session bus autolaunched through dbus-launch, which outlives
// the process that started it. The child runs with a marker variable in its
// environment; every process it starts inherits it (dbus-launch and
// dbus-daemon keep their environment), so a process that still carries the
// marker after the child exited is one it left behind.
package busguard

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Marker is one child's environment marker.
type Marker struct{ entry []byte }

// NewMarker makes a marker no other process carries.
func NewMarker() Marker {
	b := make([]byte, 8)
	rand.Read(b)
	return Marker{entry: []byte("YETT_BUSGUARD_MARK=" + hex.EncodeToString(b))}
}

// Env is the environment entry to give the child.
func (m Marker) Env() string { return string(m.entry) }

// Left lists the processes still carrying the marker (not this one).
func (m Marker) Left() []int {
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, m.entry) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// KillLeft kills what Left finds (at cleanup) and returns their command
// lines, for the failure message.
func (m Marker) KillLeft(t testing.TB) []string {
	t.Helper()
	var left []string
	for _, pid := range m.Left() {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		left = append(left, strconv.Itoa(pid)+" "+string(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '})))
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	return left
}
