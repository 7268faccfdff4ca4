package operation

import (
	"encoding/json"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Example returns arguments that Render accepts, made from the operation's
// own rules alone: for each required parameter its first allowed value or
// a shortest match of its pattern, and the least body its schema requires.
// The revocation drill's client (backend/inventory) calls an operation with
// them, so that its call reaches the checks after Render; the values are
// not meant to be sent anywhere, and a drill's call never is. ok is false
// when no such arguments were found (a pattern too involved to satisfy).
func (o *Operation) Example() (args map[string]any, ok bool) {
	args = map[string]any{}
	for _, p := range o.Params {
		if !p.Required {
			continue
		}
		v, found := p.example()
		if !found {
			return nil, false
		}
		if p.Type == "integer" {
			args[p.Name] = json.Number(v)
		} else {
			args[p.Name] = v
		}
	}
	if len(o.BodySchema) > 0 {
		s, err := parseSchema(o.BodySchema)
		if err != nil {
			return nil, false
		}
		body, found := s.example(0)
		if !found {
			return nil, false
		}
		args["body"] = body
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, false
	}
	if _, err := o.Render(raw); err != nil {
		return nil, false
	}
	return args, true
}

func (p Param) example() (string, bool) {
	var cands []string
	switch {
	case len(p.Allowed) > 0:
		cands = p.Allowed
	case p.Pattern != "":
		if v, ok := shortestMatch(p.Pattern); ok {
			cands = []string{v}
		}
	case p.Type == "integer":
		cands = []string{"1"}
	}
	for _, v := range cands {
		if v != "." && v != ".." && p.check(v) == nil {
			return v, true
		}
	}
	return "", false
}

// example builds the least value s accepts.
func (s *schema) example(depth int) (any, bool) {
	if depth > maxSchemaDepth {
		return nil, false
	}
	if len(s.Enum) > 0 {
		return s.Enum[0], true
	}
	switch s.Type {
	case "object":
		o := map[string]any{}
		for _, r := range s.Required {
			v, ok := s.Properties[r].example(depth + 1)
			if !ok {
				return nil, false
			}
			o[r] = v
		}
		return o, true
	case "string":
		v := ""
		if s.Pattern != "" {
			m, ok := shortestMatch(s.Pattern)
			if !ok {
				return nil, false
			}
			v = m
		}
		if s.MinLength != nil && utf8.RuneCountInString(v) < *s.MinLength {
			if s.Pattern != "" {
				return nil, false
			}
			v = strings.Repeat("x", *s.MinLength)
		}
		return v, true
	case "integer", "number":
		return json.Number("0"), true
	case "boolean":
		return false, true
	case "array":
		return []any{}, true
	}
	return nil, false
}

// shortestMatch builds a short string the anchored pattern matches, for
// the plain patterns operations use (literals, classes, repeats,
// alternations); ok is false for anything else.
func shortestMatch(pattern string) (string, bool) {
	re, err := syntax.Parse("^(?:"+pattern+")$", syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !gen(&b, re.Simplify(), 0) {
		return "", false
	}
	return b.String(), true
}

func gen(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > 64 {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		if len(re.Rune) < 2 {
			return false
		}
		// Prefer a letter or digit the class holds: separators make odd
		// path segments.
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, c := range []rune{'a', 'A', '0'} {
				if re.Rune[i] <= c && c <= re.Rune[i+1] {
					b.WriteRune(c)
					return true
				}
			}
		}
		b.WriteRune(re.Rune[0])
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return gen(b, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		for range re.Min {
			if !gen(b, re.Sub[0], depth+1) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !gen(b, s, depth+1) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		return gen(b, re.Sub[0], depth+1)
	}
	return false
}
