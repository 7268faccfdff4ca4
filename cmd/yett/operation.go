//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/yettdev/yett/backend/operation"
)

func init() {
	commands["operation"] = command{
		usage:   operationUsage,
		summary: "add, list or remove the named operations agents may call",
		run:     runOperation,
	}
}

const operationUsage = `usage: yett operation add --name tracker.create_issue --account NAME|ID
                          --method GET|POST|PUT|PATCH|DELETE --url URL-TEMPLATE
                          [--param NAME:TYPE[:required][:allowed=V1|V2][:pattern=RE] ...]
                          [--body-schema FILE] [--description TEXT]
                          [--approval session|per-call|writes] [--read-only]
       yett operation list
       yett operation remove NAME

A named operation is a tool agents see: they supply its parameters, never a
token, endpoint or scope. The URL template names path parameters in braces
(https://api.example.com/projects/{project}/issues); any other parameter
goes in the query. TYPE is string or integer; allowed= lists the only values
accepted; pattern= (last, as it may hold colons) is an RE2 expression the
whole value must match. --body-schema names a JSON Schema file the agent's
body must match (without it the operation takes no body). --approval
session asks once per agent run, per-call on every call, writes on every
call unless the operation is --read-only (then once per run). add replaces
an operation of the same name. The rules are the app's.

Refuses unless standard input is your own controlling terminal and while the
app or yett serve runs; each change is recorded in the audit log with
"terminal" as its surface.
`

func runOperation(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, operationUsage)
		return withExitCode(2, errors.New("operation: say add, list or remove"))
	}
	sub, args := args[0], args[1:]
	switch {
	case sub == "add":
		return operationAdd(ctx, env, args)
	case sub == "-h" || sub == "--help" || sub == "help":
		fmt.Fprint(env.Stdout, operationUsage)
		return nil
	case sub == "list" && len(args) == 0, sub == "remove" && len(args) == 1:
	default:
		fmt.Fprint(env.Stderr, operationUsage)
		return withExitCode(2, errors.New("operation: say add, list, or remove NAME"))
	}
	s, err := openSetup(ctx, env, "operation "+sub, readOr(sub == "list"))
	if err != nil {
		return err
	}
	defer s.close()
	ops := s.k.State().Operations
	if ops == nil {
		return errors.New("operation: the catalogue did not open (see the messages above)")
	}
	if sub == "list" {
		printOperations(env.Stdout, ops.List())
		return nil
	}
	if _, ok := ops.Lookup(args[0]); !ok {
		return fmt.Errorf("operation remove: there is no operation named %q", args[0])
	}
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Remove operation %q? Agents lose the tool at once.", args[0]))
	if err != nil {
		return fmt.Errorf("operation remove: %w", err)
	}
	if !ok {
		return errors.New("operation remove: nothing was removed")
	}
	if err := ops.Remove(args[0]); err != nil {
		return fmt.Errorf("operation remove: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Removed operation %q.\n", args[0])
	return nil
}

func operationAdd(ctx context.Context, env *Env, args []string) error {
	fs := flag.NewFlagSet("yett operation add", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() { fmt.Fprint(env.Stderr, operationUsage) }
	var o operation.Operation
	var params listFlag
	fs.StringVar(&o.Name, "name", "", "the tool's name, like tracker.create_issue")
	account := fs.String("account", "", "the connected account it uses (name or id)")
	fs.StringVar(&o.Method, "method", "", "the HTTP method")
	fs.StringVar(&o.URLTemplate, "url", "", "the URL template")
	fs.Var(&params, "param", "a parameter NAME:TYPE[:required][:allowed=V1|V2][:pattern=RE] (repeat for more)")
	schema := fs.String("body-schema", "", "a JSON Schema file for the body")
	fs.StringVar(&o.Description, "description", "", "what it does, for the agent")
	approval := fs.String("approval", "session", "session, per-call or writes")
	fs.BoolVar(&o.ReadOnly, "read-only", false, "it only reads: agents' clients are told so; with --approval writes it asks once per run")
	if err := fs.Parse(args); err != nil {
		return withExitCode(2, err)
	}
	o.Approval = strings.ReplaceAll(*approval, "-", "_")
	o.Method = strings.ToUpper(o.Method)
	if fs.NArg() != 0 || o.Name == "" || *account == "" || o.Method == "" || o.URLTemplate == "" {
		fs.Usage()
		return withExitCode(2, errors.New("operation add: --name, --account, --method and --url are required"))
	}
	for _, spec := range params {
		p, err := parseParam(spec)
		if err != nil {
			return withExitCode(2, fmt.Errorf("operation add: --param %q: %w", spec, err))
		}
		o.Params = append(o.Params, p)
	}
	if *schema != "" {
		b, err := os.ReadFile(*schema)
		if err != nil {
			return withExitCode(2, fmt.Errorf("operation add: the body schema: %w", err))
		}
		if !json.Valid(b) {
			return withExitCode(2, errors.New("operation add: the body schema is not JSON"))
		}
		o.BodySchema = b
	}
	s, err := openSetup(ctx, env, "operation add", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	st := s.k.State()
	if st.OAuth == nil || st.Operations == nil {
		return errors.New("operation add: OAuth custody did not start (see the messages above)")
	}
	list, err := st.OAuth.Authorizations()
	if err != nil {
		return fmt.Errorf("operation add: %w", err)
	}
	a, err := findAccount(list, *account)
	if err != nil {
		return fmt.Errorf("operation add: %w", err)
	}
	o.AuthorizationID = a.ID
	if err := st.Operations.Add(o); err != nil {
		return fmt.Errorf("operation add: %w", err)
	}
	if err := s.recorded(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Saved operation %q on %q (%s): agents see it as a tool while the vault is unlocked.\n", o.Name, a.Name, a.ID)
	return nil
}

// parseParam reads NAME:TYPE[:required][:allowed=V1|V2][:pattern=RE].
func parseParam(spec string) (operation.Param, error) {
	var p operation.Param
	rest := spec
	if i := strings.Index(rest, ":pattern="); i >= 0 {
		p.Pattern = rest[i+len(":pattern="):]
		rest = rest[:i]
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return p, errors.New("want NAME:TYPE, then :required, :allowed=V1|V2 or :pattern=RE")
	}
	p.Name, p.Type = parts[0], parts[1]
	for _, f := range parts[2:] {
		switch {
		case f == "required":
			p.Required = true
		case strings.HasPrefix(f, "allowed="):
			p.Allowed = strings.Split(strings.TrimPrefix(f, "allowed="), "|")
		default:
			return p, fmt.Errorf("%q is not required, allowed=... or pattern=...", f)
		}
	}
	return p, nil
}

func printOperations(w io.Writer, list []operation.Operation) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No operations. Add one with yett operation add.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACCOUNT\tMETHOD\tURL\tPARAMETERS\tAPPROVAL")
	for _, o := range list {
		var ps []string
		for _, p := range o.Params {
			d := p.Name + ":" + p.Type
			if p.Required {
				d += ":required"
			}
			if len(p.Allowed) > 0 {
				d += ":allowed=" + strings.Join(p.Allowed, "|")
			}
			if p.Pattern != "" {
				d += ":pattern=" + p.Pattern
			}
			ps = append(ps, d)
		}
		approval := approvalWords(o.Approval)
		if o.ReadOnly {
			approval += ", reads only"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.Name, o.AuthorizationID, o.Method, o.URLTemplate,
			orText(strings.Join(ps, " "), "-"), approval)
	}
	tw.Flush()
}
