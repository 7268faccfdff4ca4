package userdir

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDataDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("layout table is for Linux")
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"override", map[string]string{"YETT_DATA_DIR": "/tmp/v", "HOME": "/h"}, "/tmp/v"},
		{"xdg", map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/yett"},
		{"relative xdg ignored", map[string]string{"XDG_DATA_HOME": "x", "HOME": "/h"}, "/h/.local/share/yett"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/share/yett"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DataDir(env(tt.env))
			if err != nil || got != tt.want {
				t.Fatalf("DataDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := DataDir(env(nil)); err == nil {
		t.Fatal("DataDir without HOME should fail")
	}
}

func TestRuntimeDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("layout table is for Linux")
	}
	got, _ := RuntimeDir(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/1", "HOME": "/h"}))
	if got != "/run/user/1/yett" {
		t.Fatalf("got %q", got)
	}
	got, _ = RuntimeDir(env(map[string]string{"HOME": "/h"}))
	if got != "/h/.local/share/yett/run" {
		t.Fatalf("got %q", got)
	}
}

func TestEnsureTightens(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, want 0700", fi.Mode().Perm())
	}
}
