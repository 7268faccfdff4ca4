package operation

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

var fuzzOp = Operation{
	Name: "tracker.create_issue", AuthorizationID: "az-1", Method: "POST",
	URLTemplate: "https://api.example.test/projects/{project}/issues",
	Params: []Param{
		{Name: "project", Type: "string", Allowed: []string{"A", "b c/d"}, Required: true},
		{Name: "limit", Type: "integer", Pattern: "[0-9]{1,3}"},
	},
	BodySchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","maxLength":50},"labels":{"type":"array","items":{"type":"string","enum":["bug","docs"]},"maxItems":3}},"required":["title"]}`),
	Approval:   ApprovalSession,
}

// FuzzOperationRender: agents' arguments never make Render panic, and
// whatever it accepts stays on the operation's host and path shape with an
// allowed project.
func FuzzOperationRender(f *testing.F) {
	if err := fuzzOp.Validate(); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"project":"A","body":{"title":"x"}}`, `{"project":"b c/d","limit":5,"body":{"title":"x","labels":["bug"]}}`,
		`{"project":"B","body":{"title":"x"}}`, `{"project":"A"}`, `{"project":"A","body":{"title":"x","extra":1}}`,
		`{"project":"../A","body":{"title":"x"}}`, `[]`, `{"project":"A","body":{"title":"x"}}{}`, `{"idempotency_key":"k-1","project":"A","body":{"title":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := fuzzOp.Render(raw)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("a refusal that is not an ArgError: %v", err)
			}
			return
		}
		u, err := url.Parse(c.URL)
		if err != nil || u.Host != "api.example.test" || u.Scheme != "https" {
			t.Fatalf("accepted arguments moved the call: %q", c.URL)
		}
		rest, ok := strings.CutPrefix(u.EscapedPath(), "/projects/")
		if !ok || !strings.HasSuffix(rest, "/issues") {
			t.Fatalf("accepted arguments changed the path shape: %q", u.EscapedPath())
		}
		if p := strings.TrimSuffix(rest, "/issues"); p != "A" && p != url.PathEscape("b c/d") {
			t.Fatalf("a project outside the allowed values: %q", p)
		}
		if c.Method != "POST" || !json.Valid(c.Body) {
			t.Fatal("accepted call has another method or an invalid body")
		}
	})
}
