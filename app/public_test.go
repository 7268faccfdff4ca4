package app

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/yettdev/yett/backend/oauth"
	"github.com/yettdev/yett/backend/vault"
)

// TestPublicErrorIsTheOneFilter: a text a service chose passes as it is
// (also wrapped), a documented error reads as its own words or the
// table's, and anything else is logged and said generically, never
// echoed.
func TestPublicErrorIsTheOneFilter(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	table := []known{{vault.ErrLocked, "Unlock the vault first."}, {err: oauth.ErrInvalid}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{shown("Pick a file."), "Pick a file."},
		{fmt.Errorf("export: %w", shown("Pick a file.")), "Pick a file."},
		{fmt.Errorf("reading: %w", vault.ErrLocked), "Unlock the vault first."},
		{fmt.Errorf("%w: name must be 1-64 characters", oauth.ErrInvalid), "Name must be 1-64 characters."},
		{errors.New("open /home/x/db: CANARY-secret"), string(errCouldNot)},
	} {
		got := publicError(log, "test op", c.err, table)
		if c.want == "" {
			if got != nil {
				t.Errorf("%v: %v, want nil", c.err, got)
			}
			continue
		}
		if got == nil || got.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.err, got, c.want)
		}
	}
	if !strings.Contains(logs.String(), "test op failed") || strings.Count(logs.String(), "failed") != 1 {
		t.Errorf("only the undocumented error is logged: %s", logs.String())
	}
}
