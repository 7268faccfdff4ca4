//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/oauth"
)

func init() {
	commands["accounts"] = command{
		usage:   accountsUsage,
		summary: "list connected OAuth accounts; revoke one, switch one back on, or set its endpoints, at this terminal",
		run:     runAccounts,
	}
}

const accountsUsage = `usage: yett accounts [list]
       yett accounts revoke NAME|ID
       yett accounts resume NAME|ID
       yett accounts endpoints NAME|ID [--revocation URL] [--introspection URL]

list shows every connected account with its owner and backup revoker, its
state and what needs attention. revoke cuts one off as the app does: first
locally (its tokens leave service and its operations are refused, with no
network needed), then at the provider (RFC 7009, retried by whichever Yett
runs next while the provider is unreachable), then it checks that the tokens
are inactive, and says how each step went.

resume switches a suspended account back on (an unattended drill suspends it
for a moment; an older Yett's failed drill could leave it so). endpoints adds
or corrects where it is revoked (RFC 7009) and verified (RFC 7662): discovery
leaves the introspection endpoint empty for providers that keep it elsewhere,
such as Ory Hydra's admin port; "" removes one, and an option not given stays
as it is. Tokens waiting to be revoked go to the new endpoint at once.

Refuses unless standard input is your own controlling terminal and while the
app or yett serve runs; a revocation is recorded in the audit log with
"terminal" as its surface.
`

func runAccounts(ctx context.Context, env *Env, args []string) error {
	sub := "list"
	if len(args) > 0 {
		sub = args[0]
		args = args[1:]
	}
	switch {
	case sub == "-h" || sub == "--help" || sub == "help":
		fmt.Fprint(env.Stdout, accountsUsage)
		return nil
	case sub == "list" && len(args) == 0, (sub == "revoke" || sub == "resume") && len(args) == 1, sub == "endpoints" && len(args) >= 1:
	default:
		fmt.Fprint(env.Stderr, accountsUsage)
		return withExitCode(2, errors.New("accounts: say list, revoke NAME|ID, resume NAME|ID or endpoints NAME|ID"))
	}
	var revocation, introspection *string
	if sub == "endpoints" {
		var err error
		if revocation, introspection, err = endpointFlags(env, args[1:]); err != nil {
			return err
		}
		args = args[:1]
	}
	s, err := openSetup(ctx, env, "accounts "+sub, readOr(sub == "list"))
	if err != nil {
		return err
	}
	defer s.close()
	st := s.k.State()
	if st.OAuth == nil || st.Operations == nil {
		return errors.New("accounts: OAuth custody did not start (see the messages above)")
	}
	list, err := st.OAuth.Authorizations()
	if err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	if sub == "list" {
		// Who answers for each account, and whether it is under control,
		// are the owner inventory's to say.
		owners := map[string]inventory.Row{}
		if st.Inventory != nil {
			rows, err := st.Inventory.Rows(ctx, inventory.Filter{})
			if err != nil {
				return fmt.Errorf("accounts: %w", err)
			}
			for _, r := range rows {
				owners[r.ID] = r
			}
		}
		printAccounts(env.Stdout, list, owners, st.Operations.NamesByAuthorization())
		return nil
	}
	a, err := findAccount(list, args[0])
	if err != nil {
		return fmt.Errorf("accounts %s: %w", sub, err)
	}
	switch sub {
	case "resume":
		if err := st.OAuth.Resume(ctx, a.ID); err != nil {
			return fmt.Errorf("accounts resume: %w", err)
		}
		fmt.Fprintf(env.Stdout, "Switched %q back on: its operations serve again.\n", a.Name)
		return s.recorded()
	case "endpoints":
		rev, intro := a.RevocationEndpoint, a.IntrospectionEndpoint
		if revocation != nil {
			rev = strings.TrimSpace(*revocation)
		}
		if introspection != nil {
			intro = strings.TrimSpace(*introspection)
		}
		if err := st.OAuth.SetEndpoints(ctx, a.ID, rev, intro); err != nil {
			return fmt.Errorf("accounts endpoints: %w", err)
		}
		fmt.Fprintf(env.Stdout, "%q: revoked at %s, verified at %s.\n", a.Name, orText(rev, "(no revocation endpoint)"), orText(intro, "(no introspection endpoint)"))
		return s.recorded()
	}
	return s.revokeAccount(ctx, env, st.OAuth, a)
}

// revokeAccount revokes a after the person confirms it, and prints each
// step of the revocation as it went.
func (s *setup) revokeAccount(ctx context.Context, env *Env, m *oauth.Custody, a oauth.AuthorizationView) error {
	ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Revoke %q (%s, %s at %s)? Its operations stop at once.", a.Name, a.ID, orText(a.AccountRef, "account not named"), a.ProviderHost))
	if err != nil {
		return fmt.Errorf("accounts revoke: %w", err)
	}
	if !ok {
		return errors.New("accounts revoke: nothing was revoked")
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	rep, err := m.Revoke(rctx, a.ID)
	if err != nil {
		return fmt.Errorf("accounts revoke: %w", err)
	}
	for _, step := range rep.Steps {
		mark := "ok"
		switch {
		case step.Unverified:
			mark = "UNVERIFIED"
		case !step.OK:
			mark = "NOT DONE"
		}
		fmt.Fprintf(env.Stdout, "%-20s %-8s %s\n", strings.ReplaceAll(step.Step, "_", " "), mark, step.Detail)
	}
	if rep.RetryPending {
		fmt.Fprintln(env.Stdout, "The provider could not be reached: the revocation is retried by the app or yett serve, whichever runs next, while the vault is unlocked.")
	}
	return s.recorded()
}

// endpointFlags reads yett accounts endpoints' flags: each of the two
// endpoints given is returned (an empty one clears it), one not given is
// nil; usage problems exit 2.
func endpointFlags(env *Env, args []string) (revocation, introspection *string, err error) {
	fs := flag.NewFlagSet("accounts endpoints", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rev := fs.String("revocation", "", "")
	intro := fs.String("introspection", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		fmt.Fprint(env.Stderr, accountsUsage)
		return nil, nil, withExitCode(2, errors.New("accounts endpoints: give --revocation URL and/or --introspection URL"))
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "revocation":
			revocation = rev
		case "introspection":
			introspection = intro
		}
	})
	if revocation == nil && introspection == nil {
		return nil, nil, withExitCode(2, errors.New("accounts endpoints: give --revocation URL and/or --introspection URL"))
	}
	return revocation, introspection, nil
}

// findAccount picks by id, or by a name only one account has.
func findAccount(list []oauth.AuthorizationView, ref string) (oauth.AuthorizationView, error) {
	var byName []oauth.AuthorizationView
	for _, a := range list {
		if a.ID == ref {
			return a, nil
		}
		if a.Name == ref {
			byName = append(byName, a)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return oauth.AuthorizationView{}, fmt.Errorf("no account is named %q (yett accounts)", ref)
	}
	return oauth.AuthorizationView{}, fmt.Errorf("%d accounts are named %q: name one by its id (yett accounts)", len(byName), ref)
}

func printAccounts(w io.Writer, list []oauth.AuthorizationView, owners map[string]inventory.Row, ops map[string][]string) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No connected accounts. Connect one with yett connect.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPROVIDER\tACCOUNT\tENVIRONMENT\tSTATE\tOWNER\tBACKUP REVOKER\tOPERATIONS")
	for _, a := range list {
		r := owners[a.ID]
		state := a.State
		if a.Revocation != oauth.RevocationNone && a.Revocation != "" {
			state += ", revocation " + a.Revocation
		}
		if !r.Controlled {
			state += ", not under control"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, a.ProviderHost, orText(a.AccountRef, "-"), a.Environment,
			state, orText(r.Owner, "-"), orText(r.BackupRevoker, "-"), orText(strings.Join(ops[a.ID], ","), "-"))
	}
	tw.Flush()
	for _, a := range list {
		for _, p := range a.Problems {
			fmt.Fprintf(w, "%s: %s\n", a.Name, p)
		}
		r, ok := owners[a.ID]
		switch {
		case !ok:
			fmt.Fprintf(w, "%s: not in the owner inventory (it did not start)\n", a.Name)
		case len(r.Missing) > 0:
			fmt.Fprintf(w, "%s: not under control, missing %s\n", a.Name, strings.Join(r.Missing, ", "))
		}
		if r.ReviewDue {
			fmt.Fprintf(w, "%s: its expiry review date has passed\n", a.Name)
		}
	}
}
