package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestAccessTokenRedacts: an access token, held in the cache or lent in a
// Lease, prints, marshals and logs as REDACTED through every path.
func TestAccessTokenRedacts(t *testing.T) {
	const tok = "CANARY-access-token-5e1f"
	at := &accessToken{gen: 3, value: newTokenValue(tok), typ: "Bearer"}
	lease := &Lease{t: at, value: newTokenValue(tok), id: "auth-1"}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("token", "at", at, "lease", lease, "value", at.value, "deref", *at)
	var out strings.Builder
	for _, v := range []any{at, *at, lease, *lease, at.value, lease.value} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
			fmt.Fprintf(&out, verb+"\n", v)
		}
		js, _ := json.Marshal(v)
		out.Write(js)
	}
	out.WriteString(logs.String())
	for _, form := range []string{tok, "CANARY", fmt.Sprintf("%x", tok), fmt.Sprint([]byte(tok)[:6])} {
		if strings.Contains(out.String(), form) {
			t.Fatalf("the access token leaks (%q) in:\n%s", form, out.String())
		}
	}
}
