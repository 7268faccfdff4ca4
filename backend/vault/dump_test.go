package vault

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/store"
)

// dumpTables returns each table's rows as text: the logical contents,
// which unlike the file bytes do not depend on WAL checkpoints.
func dumpTables(t testing.TB, dir string) map[string]string {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, FileName), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(db)
	out := map[string]string{}
	for _, table := range []string{"vault_meta", "vault_records", "vault_epoch", "unlock_throttle", "schema_version"} {
		rows, err := db.Raw("SELECT * FROM " + table + " ORDER BY 1").Rows()
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var b strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%x\n", vals)
		}
		rows.Close()
		out[table] = b.String()
	}
	return out
}
