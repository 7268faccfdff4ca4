package lockwatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestOtherOSesCompile keeps the macOS, Windows and fallback code honest on
// a Linux CI, where nothing else compiles it until the app links it.
// macOS with cgo needs a Mac; here the darwin build is the no-cgo one.
func TestOtherOSesCompile(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"windows vet", []string{"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0"}, []string{"vet", "."}},
		{"windows build", []string{"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0"}, []string{"build", "."}},
		{"windows 386 build", []string{"GOOS=windows", "GOARCH=386", "CGO_ENABLED=0"}, []string{"build", "."}},
		{"darwin vet", []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}, []string{"vet", "."}},
		{"freebsd vet", []string{"GOOS=freebsd", "GOARCH=amd64", "CGO_ENABLED=0"}, []string{"vet", "."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(goTool, tt.args...)
			cmd.Env = append(os.Environ(), tt.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v go %v: %v\n%s", tt.env, tt.args, err, out)
			}
		})
	}
}
