//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/yettdev/yett/backend/team"
)

// teamWitness names the team's witness in this machine's membership, or
// (--none) forgets it. It asks for the passphrase every time: pointing the
// checkpoints at another witness, or at none, takes away the evidence the
// team holds against a rewritten log.
func teamWitness(ctx context.Context, env *Env, args []string) error {
	var url, key string
	var none bool
	rest, err := teamFlags(env, "witness", args, func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "")
		fs.StringVar(&key, "key", "", "")
		fs.BoolVar(&none, "none", false, "")
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 || none == (url != "" || key != "") || (!none && (url == "" || key == "")) {
		fmt.Fprint(env.Stderr, teamUsage)
		return withExitCode(2, errors.New("team witness: give --url and --key, or --none"))
	}
	var w *team.WitnessSettings
	if !none {
		w = &team.WitnessSettings{URL: url, Key: key}
		if err := w.Check(); err != nil {
			return withExitCode(2, fmt.Errorf("team witness: %w", err))
		}
	}
	s, err := openSetup(ctx, env, "team witness", setupWiden)
	if err != nil {
		return err
	}
	defer s.close()
	c, err := s.teamCredentials()
	if err != nil {
		return err
	}
	c.Wipe()
	if err := team.SetWitness(s.v.Team(), w); err != nil {
		return fmt.Errorf("team witness: %w", err)
	}
	if none {
		fmt.Fprintln(env.Stdout, "This machine's audit checkpoints are no longer submitted to a witness.")
	} else {
		fmt.Fprintf(env.Stdout, "The app or yett serve submits this machine's audit checkpoints to %s at %s while its vault is unlocked.\n", w.Key, w.URL)
	}
	return s.recorded()
}
