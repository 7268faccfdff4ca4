package hydratest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

const modulePath = "github.com/yettdev/yett"

// hydraBinary is found once per test process: the build script flocks, but
// running it for every Start would still cost a fork and a hash each time.
var hydraBinary struct {
	once sync.Once
	path string
	err  error
}

// binaryPath returns the Hydra binary: YETT_HYDRA_BIN if set, else what
// build/scripts/hydra.sh builds or finds in its cache.
func binaryPath() (string, error) {
	hydraBinary.once.Do(func() {
		hydraBinary.path, hydraBinary.err = locateBinary()
	})
	return hydraBinary.path, hydraBinary.err
}

func locateBinary() (string, error) {
	if p := os.Getenv("YETT_HYDRA_BIN"); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("YETT_HYDRA_BIN: %w", err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "build", "scripts", "hydra.sh")
	cmd := exec.Command("bash", script)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, lastLines(stderr.Bytes(), 40))
	}
	// The script prints the path as its last line; the build's chatter is on stderr.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	p := strings.TrimSpace(lines[len(lines)-1])
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("%s printed %q: %w", script, p, err)
	}
	return p, nil
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// repoRoot walks up from the working directory, which go test sets to the
// package under test, to the go.mod of this module. Tests of any package in
// the module find the same root.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == modulePath
		}
	}
	return false
}

// lastLines returns at most n trailing lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
