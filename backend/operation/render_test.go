package oauth

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A path parameter whose value is a dot segment (or hides one behind an
// encoded slash or backslash) is refused whatever its pattern allows: the
// server would resolve it to another path than the operation's.
func TestRenderRefusesDotSegmentValues(t *testing.T) {
	op := Operation{
		Name: "files.read", AuthorizationID: "az-1", Method: "GET",
		URLTemplate: "https://api.example.test/repos/{repo}/files/{name}",
		Params: []Param{
			{Name: "repo", Type: "string", Pattern: ".+", Required: true},
			{Name: "name", Type: "string", Pattern: ".*", Required: true},
		},
		Approval: ApprovalSession,
	}
	if err := op.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Render(json.RawMessage(`{"repo":"a","name":"readme.md"}`)); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{".", "..", "../admin", `..\admin`, "x/../../admin", "%2e%2e", "..;x"} {
		raw, _ := json.Marshal(map[string]string{"repo": v, "name": "x"})
		_, err := op.Render(raw)
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("repo %q: %v, want an ArgError", v, err)
		}
	}
}

// Render reads each argument once, in one spelling: a duplicate key or a
// key in another letter case is refused, not resolved silently.
func TestRenderRefusesDuplicateKeys(t *testing.T) {
	for name, raw := range map[string]string{
		"param twice":   `{"project":"A","project":"b c/d","body":{"title":"x"}}`,
		"key twice":     `{"project":"A","body":{"title":"x"},"idempotency_key":"k-1","idempotency_key":"k-2"}`,
		"body twice":    `{"project":"A","body":{"title":"x"},"body":{"title":"y"}}`,
		"case variant":  `{"project":"A","Project":"b c/d","body":{"title":"x"}}`,
		"kelvin sign":   `{"project":"A","body":{"title":"x"},"idempotency_\u212aey":"k-1"}`,
		"upper reserve": `{"project":"A","BODY":{"title":"x"}}`,
	} {
		_, err := fuzzOp.Render(json.RawMessage(raw))
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s: %v, want an ArgError", name, err)
		} else if strings.Contains(ae.Msg, "b c/d") {
			t.Errorf("%s: the refusal echoes a value", name)
		}
	}
}
