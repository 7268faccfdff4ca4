package userdir

import (
	"path/filepath"
	"testing"
)

// On Windows there is no per-user runtime directory: the gateway's pipe is
// named after the data directory's run folder, which is the one place the
// shim looks (or $YETT_RUNTIME_DIR).
func TestRuntimePlacesOnWindows(t *testing.T) {
	if _, ok := userRuntimeDir(); ok {
		t.Fatal("a runtime directory on Windows")
	}
	if _, ok := privateDir(`C:\`); ok {
		t.Fatal("privateDir accepted a directory on Windows")
	}
	places, err := RuntimePlaces(env(map[string]string{"AppData": `C:\Users\a\AppData\Roaming`, "XDG_RUNTIME_DIR": `C:\x`}))
	want := filepath.Join(`C:\Users\a\AppData\Roaming`, "Yett", "run")
	if err != nil || len(places) != 1 || places[0].Dir != want || places[0].Why != "the data directory" {
		t.Fatalf("RuntimePlaces = %v, %v; want only %s", places, err, want)
	}
	places, _ = RuntimePlaces(env(map[string]string{"AppData": `C:\r`, "YETT_RUNTIME_DIR": `C:\y`}))
	if len(places) != 1 || places[0].Dir != `C:\y` {
		t.Fatalf("the override: %v", places)
	}
}
