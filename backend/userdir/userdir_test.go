package userdir

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	saved := userRuntimeDir
	t.Cleanup(func() { userRuntimeDir = saved })
	userRuntimeDir = func() (string, bool) { return "", false }
	got, _ := RuntimeDir(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/1", "HOME": "/h"}))
	if got != "/run/user/1/yett" {
		t.Fatalf("got %q", got)
	}
	got, _ = RuntimeDir(env(map[string]string{"HOME": "/h"}))
	if got != "/h/.local/share/yett/run" {
		t.Fatalf("got %q", got)
	}
	// A filtered environment (Codex keeps HOME and PATH) finds the
	// directory a desktop session's $XDG_RUNTIME_DIR names.
	userRuntimeDir = func() (string, bool) { return "/run/user/1", true }
	got, _ = RuntimeDir(env(map[string]string{"HOME": "/h"}))
	if got != "/run/user/1/yett" {
		t.Fatalf("without $XDG_RUNTIME_DIR: got %q", got)
	}
	places, err := RuntimePlaces(env(map[string]string{"XDG_RUNTIME_DIR": "/x", "HOME": "/h"}))
	want := []Place{{"/x/yett", "$XDG_RUNTIME_DIR"}, {"/run/user/1/yett", "the user's runtime directory"}, {"/h/.local/share/yett/run", "the data directory"}}
	if err != nil || !slices.Equal(places, want) {
		t.Fatalf("RuntimePlaces = %v, %v; want %v", places, err, want)
	}
	places, _ = RuntimePlaces(env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/1", "HOME": "/h"}))
	if len(places) != 2 {
		t.Fatalf("the same directory twice: %v", places)
	}
	places, _ = RuntimePlaces(env(map[string]string{"YETT_RUNTIME_DIR": "/y", "XDG_RUNTIME_DIR": "/x", "HOME": "/h"}))
	if !slices.Equal(places, []Place{{"/y", "$YETT_RUNTIME_DIR"}}) {
		t.Fatalf("an override is the only place: %v", places)
	}
	places, err = RuntimePlaces(env(nil))
	if err != nil || len(places) != 1 || places[0].Dir != "/run/user/1/yett" {
		t.Fatalf("no HOME, a runtime directory: %v, %v", places, err)
	}
}

// The user's runtime directory counts only when it is a directory of this
// user's alone: not a link, not one others may enter, not another user's.
func TestUserRuntimeDirIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	base := t.TempDir()
	own := filepath.Join(base, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := privateDir(own); !ok {
		t.Fatal("a private directory of ours was refused")
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	link := filepath.Join(base, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for _, d := range []string{open, link, file, filepath.Join(base, "absent"), "/"} {
		if _, ok := privateDir(d); ok {
			t.Errorf("%s was taken as the user's private runtime directory", d)
		}
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
