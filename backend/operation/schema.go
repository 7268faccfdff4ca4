package operation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"unicode/utf8"
)

// schema is the JSON Schema subset an operation's body may be held to:
// type (object, string, integer, number, boolean, array), properties,
// required, enum, minLength, maxLength, pattern, items, maxItems. Objects
// never take properties they do not list (additionalProperties is false,
// whatever the schema says), so an agent cannot smuggle fields in.
type schema struct {
	Type       string             `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Enum       []any              `json:"enum"`
	MinLength  *int               `json:"minLength"`
	MaxLength  *int               `json:"maxLength"`
	Pattern    string             `json:"pattern"`
	Items      *schema            `json:"items"`
	MaxItems   *int               `json:"maxItems"`
	// Accepted and ignored: they describe, they do not constrain.
	Description          string `json:"description"`
	Title                string `json:"title"`
	AdditionalProperties *bool  `json:"additionalProperties"`
	Schema               string `json:"$schema"`
	re                   *regexp.Regexp
}

const maxSchemaDepth = 8

func parseSchema(raw json.RawMessage) (*schema, error) {
	if len(raw) > 64<<10 {
		return nil, errors.New("too large")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var s schema
	if err := dec.Decode(&s); err != nil {
		return nil, errors.New("not a JSON Schema of the supported subset (type, properties, required, enum, minLength, maxLength, pattern, items, maxItems)")
	}
	if err := s.prepare(0); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, errors.New("the body must be an object")
	}
	return &s, nil
}

func (s *schema) prepare(depth int) error {
	if depth > maxSchemaDepth {
		return errors.New("nested too deeply")
	}
	if !slices.Contains([]string{"object", "string", "integer", "number", "boolean", "array"}, s.Type) {
		return errors.New("every schema needs a type: object, string, integer, number, boolean or array")
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return errors.New("a pattern is not a valid regular expression")
		}
		s.re = re
	}
	for _, p := range s.Properties {
		if p == nil {
			return errors.New("a property has no schema")
		}
		if err := p.prepare(depth + 1); err != nil {
			return err
		}
	}
	for _, r := range s.Required {
		if s.Properties[r] == nil {
			return fmt.Errorf("required property %q is not described", clip(r, 40))
		}
	}
	if s.Type == "array" {
		if s.Items == nil {
			return errors.New("an array needs items")
		}
		return s.Items.prepare(depth + 1)
	}
	return nil
}

// check validates v (decoded with UseNumber) against s; the error names
// the path and the rule, never the value.
func (s *schema) check(path string, v any, depth int) error {
	if depth > maxSchemaDepth {
		return argErr("%s is nested too deeply", path)
	}
	switch s.Type {
	case "object":
		o, ok := v.(map[string]any)
		if !ok {
			return argErr("%s must be an object", path)
		}
		for k, x := range o {
			p := s.Properties[k]
			if p == nil {
				return argErr("%s: unknown property %q", path, clip(k, 40))
			}
			if err := p.check(path+"."+k, x, depth+1); err != nil {
				return err
			}
		}
		for _, r := range s.Required {
			if _, ok := o[r]; !ok {
				return argErr("%s.%s is required", path, r)
			}
		}
	case "string":
		x, ok := v.(string)
		if !ok {
			return argErr("%s must be a string", path)
		}
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength {
			return argErr("%s has the wrong length", path)
		}
		if s.re != nil && !s.re.MatchString(x) {
			return argErr("%s does not match its pattern", path)
		}
	case "integer", "number":
		x, ok := v.(json.Number)
		if !ok {
			return argErr("%s must be a %s", path, s.Type)
		}
		if s.Type == "integer" {
			if _, err := x.Int64(); err != nil {
				return argErr("%s must be an integer", path)
			}
		} else if _, err := x.Float64(); err != nil {
			return argErr("%s must be a number", path)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return argErr("%s must be true or false", path)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return argErr("%s must be an array", path)
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			return argErr("%s has too many items", path)
		}
		for i, x := range a {
			if err := s.Items.check(fmt.Sprintf("%s[%d]", path, i), x, depth+1); err != nil {
				return err
			}
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return argErr("%s is not one of the allowed values", path)
	}
	return nil
}
