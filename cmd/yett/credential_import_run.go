//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/credimport"
	"github.com/yettdev/yett/backend/vault"
)

// importRun is one yett credential import after the vault opened: what
// the person chooses, what was added and what was not.
type importRun struct {
	s   *setup
	o   *importOptions
	src *credimport.Source
	// taken holds the stored credentials' names and those added since,
	// lower-cased: a name is refused when any of them has it.
	taken map[string]bool

	approval                   vault.Approval
	owner, backup, environment string

	added  []importAdded
	missed []importMissed
}

type importAdded struct {
	entry        int // from 1, as listed
	name, id     string
	hosts, paths []string
}

// importMissed is a chosen entry that was not added, and why. declined:
// the person said so at a prompt (skipped it, or would not have it
// overlap), which is no failure.
type importMissed struct {
	entry    int
	name     string
	reason   string
	declined bool
}

// importPlan is what one entry becomes.
type importPlan struct {
	name         string
	hosts, paths []string
}

// choose asks which entries to import until the answer is one.
func (r *importRun) choose(ctx context.Context) ([]int, error) {
	for {
		line, err := r.s.tty.Line(ctx, "Import which? Numbers such as 1,3-4, or all (Enter imports none): ")
		if err != nil {
			return nil, fmt.Errorf("credential import: %w", err)
		}
		chosen, err := parseChoice(line, r.src)
		switch {
		case errors.Is(err, errChooseNone):
			return nil, errors.New("credential import: nothing was chosen, so nothing was imported")
		case err != nil:
			r.s.tty.Printf("%s.\n", capitalized(err.Error()))
			continue
		}
		return chosen, nil
	}
}

// shared settles the approval and who answers, which apply to every
// entry: from the flags, else asked (scripted: as add's defaults).
func (r *importRun) shared(ctx context.Context) error {
	o, tty := r.o, r.s.tty
	r.approval, r.owner, r.backup, r.environment = o.approval, o.owner, o.backup, o.environment
	if r.approval == "" && !o.scripted() {
		for {
			line, err := tty.Line(ctx, "Approval for all of them: session (once per agent run), per-call (every request) or writes (reads once per run, every write) [session]: ")
			if err != nil {
				return fmt.Errorf("credential import: %w", err)
			}
			if line == "" {
				break
			}
			if r.approval, err = approvalOf(line); err == nil {
				break
			}
			tty.Printf("%s.\n", capitalized(err.Error()))
		}
	}
	if r.approval == "" {
		r.approval = vault.ApprovalSession
	}
	if !o.whoGiven() && !o.scripted() {
		tty.Printf("Who answers for them in the owner inventory? Enter leaves one empty.\n")
		var err error
		if r.owner, err = tty.Line(ctx, "  Owner: "); err != nil {
			return fmt.Errorf("credential import: %w", err)
		}
		if r.backup, err = tty.Line(ctx, "  Backup revoker, who can cut them off when the owner cannot: "); err != nil {
			return fmt.Errorf("credential import: %w", err)
		}
		for {
			if r.environment, err = tty.Line(ctx, "  Environment (development, staging or production): "); err != nil {
				return fmt.Errorf("credential import: %w", err)
			}
			if err := checkEnvironment(r.environment); err == nil {
				break
			}
			tty.Printf("  It is development, staging or production, or nothing.\n")
		}
	}
	if r.owner == "" || r.backup == "" {
		tty.Printf("Without an owner and a backup revoker they are flagged not under control.\n")
	}
	return nil
}

// importAll adds each chosen entry in turn: its plan comes from the flags
// or the person, and the next entry's name and overlap checks see the
// ones added before it. It stops when the audit log stops taking records.
func (r *importRun) importAll(ctx context.Context, chosen []int) error {
	for _, i := range chosen {
		e := &r.src.Entries[i]
		var (
			p    importPlan
			miss *importMissed
			err  error
		)
		if r.o.scripted() {
			p, miss = r.scriptedPlan(i, e)
		} else if p, miss, err = r.askPlan(ctx, i, e); err != nil {
			return err
		}
		if miss != nil {
			r.missed = append(r.missed, *miss)
			continue
		}
		if err := r.add(ctx, i, e, p); err != nil {
			return err
		}
	}
	return nil
}

func (r *importRun) miss(i int, name, reason string, declined bool) *importMissed {
	return &importMissed{entry: i + 1, name: name, reason: reason, declined: declined}
}

func takenWords(name string) string {
	return fmt.Sprintf("a credential named \"%s\" already exists", terminalSafe(name))
}

// scriptedPlan is entry i's plan from --host and --path; an entry whose
// name is taken, without a host, or whose bindings overlap a stored
// credential's is not imported (nobody is there to say otherwise).
func (r *importRun) scriptedPlan(i int, e *credimport.Entry) (importPlan, *importMissed) {
	name := e.SuggestedName()
	if !e.Importable() {
		return importPlan{}, r.miss(i, name, e.Problem, false)
	}
	if nameTaken(r.taken, name) {
		return importPlan{}, r.miss(i, name, takenWords(name), false)
	}
	p := importPlan{name: name, hosts: r.o.hosts[name], paths: r.o.paths[name]}
	if len(p.hosts) == 0 && e.Host != "" {
		p.hosts = []string{e.Host}
	}
	if len(p.hosts) == 0 {
		return importPlan{}, r.miss(i, name, fmt.Sprintf("it suggests no host: name one with --host \"%s=HOST\"", terminalSafe(name)), false)
	}
	if overlaps, err := r.s.v.Credentials().CheckBindings(p.hosts, p.paths, ""); err == nil && len(overlaps) > 0 {
		return importPlan{}, r.miss(i, name, "it "+overlapWords(overlaps[0])+"; without --all and --host the import asks whether to add it anyway", false)
	}
	return p, nil
}

// askPlan asks for entry i's name, hosts and path prefixes, the
// suggestions as defaults, and whether to import it when it overlaps a
// stored credential.
func (r *importRun) askPlan(ctx context.Context, i int, e *credimport.Entry) (importPlan, *importMissed, error) {
	tty := r.s.tty
	fail := func(err error) (importPlan, *importMissed, error) {
		return importPlan{}, nil, fmt.Errorf("credential import: %w", err)
	}
	suggested := e.SuggestedName()
	tty.Printf("\n[%d] %s: %s, %s\n", i+1, terminalSafe(suggested), e.Kind, characters(e.Length))
	p := importPlan{name: suggested}
	why := ""
	if nameTaken(r.taken, suggested) {
		why = takenWords(suggested)
		tty.Printf("  %s.\n", capitalized(why))
		p.name = ""
	}
	for {
		line, err := tty.Line(ctx, "  Name "+defaultOr(p.name, "(Enter skips this entry)")+": ")
		if err != nil {
			return fail(err)
		}
		if line == "" && p.name == "" {
			return importPlan{}, r.miss(i, suggested, orText(why, "no name was given"), true), nil
		}
		if line == "" {
			break
		}
		if nameTaken(r.taken, line) {
			tty.Printf("  %s: give this one another name.\n", capitalized(takenWords(line)))
			continue
		}
		p.name = line
		break
	}
	for {
		line, err := tty.Line(ctx, "  Hosts it may be sent to "+defaultOr(e.Host, "(Enter skips this entry)")+": ")
		if err != nil {
			return fail(err)
		}
		hosts := bindingFields(orText(line, e.Host))
		if len(hosts) == 0 {
			return importPlan{}, r.miss(i, p.name, "no host was given", true), nil
		}
		if err := checkBindings(hosts, nil); err != nil {
			tty.Printf("  %s.\n", capitalized(err.Error()))
			continue
		}
		p.hosts = hosts
		break
	}
	for {
		line, err := tty.Line(ctx, "  Path prefixes [/]: ")
		if err != nil {
			return fail(err)
		}
		paths := bindingFields(line)
		if err := checkBindings(nil, paths); err != nil {
			tty.Printf("  %s.\n", capitalized(err.Error()))
			continue
		}
		p.paths = paths
		break
	}
	overlaps, err := r.s.v.Credentials().CheckBindings(p.hosts, p.paths, "")
	if err != nil || len(overlaps) == 0 {
		return p, nil, nil
	}
	for _, o := range overlaps {
		tty.Printf("  This credential %s.\n", overlapWords(o))
	}
	ok, err := tty.Confirm(ctx, "  Import it anyway?")
	if err != nil {
		return fail(err)
	}
	if !ok {
		return importPlan{}, r.miss(i, p.name, "it "+overlapWords(overlaps[0]), true), nil
	}
	return p, nil, nil
}

// defaultOr shows a prompt's default in brackets, or else the text.
func defaultOr(def, otherwise string) string {
	if def == "" {
		return otherwise
	}
	return "[" + terminalSafe(def) + "]"
}

// bindingFields splits hosts or paths typed on one line.
func bindingFields(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

// overlapWords says as add's warning does which stored credential a
// binding meets and which one a call would use.
func overlapWords(o vault.Overlap) string {
	what := "overlaps"
	if o.Duplicate {
		what = "has the same hosts and paths as"
	}
	return fmt.Sprintf("%s \"%s\": a call to %s would use %s", what, terminalSafe(o.Other.Name), terminalSafe(o.Example), winnerWords(o))
}

// add stores entry i as p says, with the shared settings, and records who
// answers for it. A refusal is the entry's; the audit log refusing a
// record ends the import.
func (r *importRun) add(ctx context.Context, i int, e *credimport.Entry, p importPlan) error {
	in := r.o.injection
	if in.Format == vault.InjectBasic && in.Username == "" {
		in.Username = e.Username
	}
	nc := vault.NewCredential{Name: p.name, Injection: in, Hosts: p.hosts, PathPrefixes: p.paths, Approval: r.approval,
		RotateEveryDays: r.o.rotateEvery,
		Secret:          e.Secret, // Add seals a copy; the source is wiped when the import ends
	}
	c, err := r.s.v.Credentials().Add(nc)
	if err != nil {
		r.missed = append(r.missed, *r.miss(i, p.name, err.Error(), false))
		return nil
	}
	r.taken[strings.ToLower(c.Name)] = true
	r.added = append(r.added, importAdded{entry: i + 1, name: c.Name, id: c.ID, hosts: c.Hosts, paths: c.PathPrefixes})
	if err := r.s.recorded(); err != nil {
		return err
	}
	if !r.o.scripted() {
		r.s.tty.Printf("  Added \"%s\" (%s).\n", terminalSafe(c.Name), c.ID)
	}
	if err := r.s.declare(ctx, fmt.Sprintf("credential \"%s\"", terminalSafe(c.Name)), c.ID, r.owner, r.backup, r.environment); err != nil {
		r.missed = append(r.missed, *r.miss(i, c.Name, strings.TrimPrefix(err.Error(), r.s.name+": "), false))
	}
	return nil
}

// report writes what was added and what was not, and why.
func (r *importRun) report(w io.Writer) {
	if len(r.added) > 0 {
		fmt.Fprintf(w, "\nAdded %d credential(s); their secrets are stored and will not be shown again:\n", len(r.added))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tID\tNAME\tHOSTS\tPATHS")
		for _, a := range r.added {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", a.entry, a.id, terminalSafe(a.name), terminalSafe(strings.Join(a.hosts, ",")),
				terminalSafe(strings.Join(a.paths, ",")))
		}
		tw.Flush()
	}
	if len(r.missed) > 0 {
		fmt.Fprintf(w, "\nNot imported:\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range r.missed {
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", m.entry, orText(terminalSafe(m.name), "(not named)"), terminalSafe(m.reason))
		}
		tw.Flush()
	}
	if len(r.added) > 0 {
		fmt.Fprintf(w, "\nDelete %s once you no longer need it: any program of yours can read it.\n", terminalSafe(r.o.file))
	}
}

// outcome fails the command when a chosen entry was not added for a
// reason other than the person's own answer, or when nothing was added.
func (r *importRun) outcome(chosen int) error {
	failed := 0
	for _, m := range r.missed {
		if !m.declined {
			failed++
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("credential import: %d of the %d entries chosen could not be imported (see above)", failed, chosen)
	case len(r.added) == 0:
		return errors.New("credential import: nothing was imported")
	}
	return nil
}

// capitalized starts a sentence made of an error's text.
func capitalized(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
