package hydratest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// migratedSchema is an empty Hydra database with every migration applied,
// made once per Hydra binary and kept in .cache/hydra/ next to the binary's
// cache. `hydra migrate sql up` takes about 0.8 s and serving about 0.4 s, so
// copying this file instead of migrating makes Start three times faster.
var migratedSchema struct {
	once sync.Once
	path string
	err  error
}

func schemaTemplate(bin string) (string, error) {
	migratedSchema.once.Do(func() {
		migratedSchema.path, migratedSchema.err = makeSchemaTemplate(bin)
	})
	return migratedSchema.path, migratedSchema.err
}

func makeSchemaTemplate(bin string) (string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	// A rebuilt or different binary gets its own template.
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", abs, fi.Size(), fi.ModTime().UnixNano()))
	dir := filepath.Join(root, ".cache", "hydra")
	out := filepath.Join(dir, "schema-"+hex.EncodeToString(sum[:8])+".sqlite")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Test processes of several packages may get here at once: each migrates
	// its own file and renames it into place, and rename is atomic, so a
	// reader sees no template or a complete one.
	work, err := os.MkdirTemp(dir, "schema-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	db := filepath.Join(work, "hydra.sqlite")
	logPath := filepath.Join(work, "migrate.log")
	env := []string{"DSN=" + sqliteDSN(db), "LOG_LEAK_SENSITIVE_VALUES=false"}
	if err := runLogged(bin, env, logPath, readyTimeout, "migrate", "sql", "up", "--read-from-env", "--yes"); err != nil {
		b, _ := os.ReadFile(logPath)
		return "", fmt.Errorf("hydra migrate sql up: %v\nlast 40 lines of its log:\n%s", err, lastLines(b, 40))
	}
	if err := os.Rename(db, out); err != nil {
		return "", err
	}
	return out, nil
}

// copySchema puts a fresh copy of the migrated template at dst.
func copySchema(template, dst string) error {
	src, err := os.Open(template)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sqliteDSN is a file DSN with foreign keys on, as Hydra's SQLite driver
// wants. A file, unlike DSN=memory, serializes concurrent refreshes of one
// token instead of answering 500.
func sqliteDSN(path string) string { return "sqlite://" + path + "?_fk=true" }
