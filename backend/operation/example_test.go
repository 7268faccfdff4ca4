package operation

import (
	"encoding/json"
	"testing"
)

// TestExampleArgumentsRender: the drill client's arguments pass Render for
// the shapes operations take: allowed values, patterns, integers, bodies
// with required properties, enums, lengths and nested objects; and an
// operation whose rules it cannot satisfy says so.
func TestExampleArgumentsRender(t *testing.T) {
	base := func(params []Param, body string) Operation {
		o := Operation{Name: "tracker.op", AuthorizationID: "az-1", Method: "POST", URLTemplate: "https://api.example.com/p/{project}/i",
			Params: append([]Param{{Name: "project", Type: "string", Allowed: []string{"A", "B"}, Required: true}}, params...), Approval: ApprovalSession}
		if body != "" {
			o.BodySchema = json.RawMessage(body)
		}
		return o
	}
	cases := []struct {
		name string
		op   Operation
		ok   bool
	}{
		{"allowed value", base(nil, ""), true},
		{"pattern and integer", base([]Param{
			{Name: "label", Type: "string", Pattern: `[a-z][a-z0-9-]{2,10}`, Required: true},
			{Name: "count", Type: "integer", Required: true},
			{Name: "opt", Type: "string", Pattern: `x+`},
		}, ""), true},
		{"alternation and literal", base([]Param{{Name: "ref", Type: "string", Pattern: `(main|release-[0-9]+)`, Required: true}}, ""), true},
		{"body", base(nil, `{"type":"object","properties":{"title":{"type":"string","minLength":3,"maxLength":200},
			"kind":{"type":"string","enum":["bug","task"]},"n":{"type":"integer"},"meta":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]},
			"tags":{"type":"array","items":{"type":"string"}}},"required":["title","kind","n","meta","tags"]}`), true},
		{"unsatisfiable", base([]Param{{Name: "id", Type: "string", Pattern: `\.`, Required: true}}, ""), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.op.Validate(); err != nil {
				t.Fatal(err)
			}
			args, ok := c.op.Example()
			if ok != c.ok {
				t.Fatalf("Example ok = %v, want %v (%v)", ok, c.ok, args)
			}
			if !ok {
				return
			}
			raw, _ := json.Marshal(args)
			if _, err := c.op.Render(raw); err != nil {
				t.Fatalf("Render(%s): %v", raw, err)
			}
		})
	}
}
