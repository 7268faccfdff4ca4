package vault

import (
	"testing"

	"github.com/yettdev/yett/backend/target"
)

// apiRoot is https://api.example.com/, the request most tests ask for.
var apiRoot, _ = target.Parse("https://api.example.com/")

func mustTarget(t testing.TB, raw string) target.URL {
	t.Helper()
	u, err := target.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
