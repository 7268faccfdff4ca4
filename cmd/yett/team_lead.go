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

	"github.com/yettdev/yett/backend/team"
)

// teamStatus shows the membership and the local outbox, and on a lead's
// machine every machine and request.
func teamStatus(ctx context.Context, env *Env) error {
	s, err := openSetup(ctx, env, "team status", setupRead)
	if err != nil {
		return err
	}
	defer s.close()
	c, err := s.teamCredentials()
	if err != nil {
		return err
	}
	defer c.Wipe()
	st, err := team.ReadStatus(s.dataDir, c)
	if err != nil {
		return fmt.Errorf("team status: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Team %q at %s; this machine is %s, %s of %s.\n", c.TeamName, c.Database, c.Hostname, c.Kind, c.Member)
	fmt.Fprintf(env.Stdout, "Founding lead key %s; this machine's key %s.\n", team.Fingerprint(c.FoundingLeadKey), team.Fingerprint(c.PublicKey))
	synced := "never"
	if !st.LastSynced.IsZero() {
		synced = st.LastSynced.Local().Format("2006-01-02 15:04:05")
	}
	fmt.Fprintf(env.Stdout, "Last synced %s; %d records wait to be sent.\n", synced, st.Waiting)
	if c.Witness != nil {
		fmt.Fprintf(env.Stdout, "Audit checkpoints are submitted to the witness %s at %s.\n", c.Witness.Key, c.Witness.URL)
	} else {
		fmt.Fprintln(env.Stdout, "No witness is named (yett team witness).")
	}
	if !c.Lead() {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lead, err := team.OpenLead(lctx, c)
	if err != nil {
		return fmt.Errorf("team status: %w", err)
	}
	defer lead.Close()
	machines, err := lead.Machines(lctx)
	if err != nil {
		return fmt.Errorf("team status: %w", err)
	}
	printMachines(env.Stdout, machines)
	reqs, err := lead.Requests(lctx)
	if err != nil {
		return fmt.Errorf("team status: %w", err)
	}
	printRequests(env.Stdout, reqs)
	return nil
}

func printMachines(w io.Writer, ms []team.Machine) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tMEMBER\tKIND\tROWS\tLAST SYNC\tCLOCK\tKEY")
	for _, m := range ms {
		sync, clock := "never", "-"
		if m.LastSync != nil {
			sync = m.LastSync.Local().Format("2006-01-02 15:04")
		}
		if m.ClockSkewSeconds != nil && (*m.ClockSkewSeconds > 60 || *m.ClockSkewSeconds < -60) {
			clock = fmt.Sprintf("off by %s", (time.Duration(*m.ClockSkewSeconds) * time.Second).Round(time.Minute))
		}
		kind := m.Kind
		if m.RemovedAt != nil {
			kind = "removed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Hostname, m.Member, kind, m.Rows, sync, clock, m.Fingerprint)
	}
	tw.Flush()
}

func printRequests(w io.Writer, reqs []team.RequestView) {
	if len(reqs) == 0 {
		fmt.Fprintln(w, "\nNo revocation requests.")
		return
	}
	fmt.Fprintln(w, "\nRevocation requests:")
	for _, r := range reqs {
		what := r.Status
		switch {
		case r.Status == team.StatusPending:
			what = r.Waiting
		case r.Outcome != nil:
			what += ": " + r.Outcome.Words
			if !r.Verified {
				what += " (the answer does not carry the machine's signature)"
			}
		}
		fmt.Fprintf(w, "  %s on %s (%s), asked %s: %s\n", orText(r.RowName, r.RowID), r.Hostname, r.Reason,
			r.RequestedAt.Local().Format("2006-01-02 15:04"), what)
	}
}

// teamLeadAsks runs remove and revoke: they take authority away, so the
// keyring may open the vault.
func teamLeadAsks(ctx context.Context, env *Env, sub string, args []string) error {
	var reason string
	rest, err := teamFlags(env, sub, args, func(fs *flag.FlagSet) { fs.StringVar(&reason, "reason", "", "") })
	if err != nil {
		return err
	}
	if (sub == "remove" && len(rest) != 1) || (sub == "revoke" && len(rest) != 2) {
		fmt.Fprint(env.Stderr, teamUsage)
		return withExitCode(2, errors.New("team: say remove MACHINE|MEMBER or revoke MACHINE ROW"))
	}
	s, err := openSetup(ctx, env, "team "+sub, setupUse)
	if err != nil {
		return err
	}
	defer s.close()
	c, err := s.teamCredentials()
	if err != nil {
		return err
	}
	defer c.Wipe()
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if sub == "remove" {
		ok, err := s.tty.Confirm(ctx, fmt.Sprintf("Remove %q from team %q? Its role stops logging in at once.", rest[0], c.TeamName))
		if err != nil || !ok {
			return errors.New("team remove: nothing was removed")
		}
		a, err := team.OpenAdmin(lctx, c)
		if err != nil {
			return fmt.Errorf("team remove: %w", err)
		}
		defer a.Close()
		removed, err := a.Remove(lctx, rest[0])
		if err != nil {
			return fmt.Errorf("team remove: %w", err)
		}
		fmt.Fprintf(env.Stdout, "Removed %s; their rows stay in the team's record, marked removed.\n", strings.Join(removed, ", "))
		return nil
	}
	lead, err := team.OpenLead(lctx, c)
	if err != nil {
		return fmt.Errorf("team revoke: %w", err)
	}
	defer lead.Close()
	req, err := lead.RequestRevocation(lctx, rest[0], rest[1], reason)
	if err != nil {
		return fmt.Errorf("team revoke: %w", err)
	}
	fmt.Fprintf(env.Stdout, "Asked %s to revoke %s: %s. yett team status shows the outcome.\n", req.Hostname, orText(req.RowName, req.RowID), req.Waiting)
	return nil
}
