package operation

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestOperationValidate: every rule of an operation's shape refuses with
// ErrInvalid.
func TestOperationValidate(t *testing.T) {
	good := fuzzOp
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Operation){
		"bad name":             func(o *Operation) { o.Name = "CreateIssue" },
		"reserved prefix":      func(o *Operation) { o.Name = "http.get" },
		"method":               func(o *Operation) { o.Method = "TRACE" },
		"http host":            func(o *Operation) { o.URLTemplate = "http://api.example.test/x" },
		"host placeholder":     func(o *Operation) { o.URLTemplate = "https://{project}.example.test/x" },
		"query in template":    func(o *Operation) { o.URLTemplate = "https://api.example.test/x?a=1" },
		"credentials":          func(o *Operation) { o.URLTemplate = "https://u:p@api.example.test/x" },
		"unknown placeholder":  func(o *Operation) { o.URLTemplate = "https://api.example.test/{nope}" },
		"open string":          func(o *Operation) { o.Params = []Param{{Name: "project", Type: "string", Required: true}} },
		"optional path param":  func(o *Operation) { o.Params = []Param{{Name: "project", Type: "string", Allowed: []string{"A"}}} },
		"reserved param":       func(o *Operation) { o.Params = append(o.Params, Param{Name: "body", Type: "integer"}) },
		"duplicate param":      func(o *Operation) { o.Params = append(o.Params, o.Params[0]) },
		"bad pattern":          func(o *Operation) { o.Params[1].Pattern = "(" },
		"body on GET":          func(o *Operation) { o.Method = "GET" },
		"schema not an object": func(o *Operation) { o.BodySchema = json.RawMessage(`{"type":"string"}`) },
		"schema unknown key":   func(o *Operation) { o.BodySchema = json.RawMessage(`{"type":"object","$ref":"#/x"}`) },
		"approval":             func(o *Operation) { o.Approval = "never" },
	} {
		o := good
		o.Params = append([]Param(nil), good.Params...)
		mut(&o)
		if err := o.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An operation asks on every call per call, and with "writes" unless the
// person marked it read-only.
func TestOperationAsksEachCall(t *testing.T) {
	for _, tt := range []struct {
		approval string
		readOnly bool
		asks     bool
	}{
		{ApprovalSession, false, false}, {ApprovalSession, true, false},
		{ApprovalPerCall, false, true}, {ApprovalPerCall, true, true},
		{ApprovalWrites, false, true}, {ApprovalWrites, true, false},
	} {
		o := Operation{Approval: tt.approval, ReadOnly: tt.readOnly}
		if o.AsksEachCall() != tt.asks {
			t.Errorf("%s, read-only %v: asks %v", tt.approval, tt.readOnly, !tt.asks)
		}
	}
}
