package operation

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

// TestOperationRender: a valid call renders to the exact URL, key and body;
// every refusal is an ArgError that does not echo the value.
func TestOperationRender(t *testing.T) {
	c, err := fuzzOp.Render(json.RawMessage(`{"project":"b c/d","limit":7,"body":{"title":"x","labels":["bug"]},"idempotency_key":"k-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "https://api.example.test/projects/b%20c%2Fd/issues?limit=7" || c.Key != "k-1" || string(c.Body) != `{"labels":["bug"],"title":"x"}` {
		t.Fatalf("rendered %q key %q body %s", c.URL, c.Key, c.Body)
	}
	for name, args := range map[string]string{
		"value not allowed": `{"project":"B","body":{"title":"x"}}`,
		"missing required":  `{"body":{"title":"x"}}`,
		"unknown param":     `{"project":"A","host":"evil.example","body":{"title":"x"}}`,
		"integer as text":   `{"project":"A","limit":"7; drop","body":{"title":"x"}}`,
		"no body":           `{"project":"A"}`,
		"body extra field":  `{"project":"A","body":{"title":"x","admin":true}}`,
		"enum":              `{"project":"A","body":{"title":"x","labels":["secret"]}}`,
		"too long":          `{"project":"A","body":{"title":"` + strings.Repeat("x", 51) + `"}}`,
		"bad key":           `{"project":"A","body":{"title":"x"},"idempotency_key":"a b"}`,
		"two objects":       `{"project":"A","body":{"title":"x"}}{}`,
		"not an object":     `["A"]`,
	} {
		_, err := fuzzOp.Render(json.RawMessage(args))
		var ae *ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s: %v", name, err)
		} else if strings.Contains(ae.Msg, "evil.example") || strings.Contains(ae.Msg, "drop") {
			t.Errorf("%s: the refusal echoes the value", name)
		}
	}
}
