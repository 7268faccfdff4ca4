package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"filippo.io/age"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/userdir"
)

func init() {
	commands["audit"] = command{
		usage:   auditUsage,
		summary: "verify, checkpoint, export or show the audit log",
		run:     runAudit,
	}
}

const auditUsage = `usage: yett audit verify [--log FILE] [--checkpoint FILE [--witness-key VKEY]...] [--key VKEY]
       yett audit checkpoint --out FILE [--log FILE]
       yett audit export --out FILE [--log FILE]
       yett audit show [--vault] [--vault-dir DIR] [--log FILE] [--format json|table]
       yett audit show --identity FILE [--log FILE] [--format json|table]

verify needs no key and no network. Exit codes: 0 intact, 1 tampered (the
output names the first bad entry and why), 2 unreadable or usage error.
--checkpoint is a checkpoint you saved earlier (yett audit checkpoint): with
it, verify proves the log still extends it. It may be a checkpoint a
witness cosigned (<data dir>/audit/witnessed/*/cosigned): each
--witness-key names a witness whose cosignature it must carry, checked
offline (a missing or altered cosignature exits 1). --log may also be an
export.
show decrypts with the vault's audit key: it asks for the vault passphrase on
the terminal, unlocks the vault, reads the key and locks it again. --identity
reads an age identity file instead.
`

func runAudit(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.Stdout, auditUsage)
		return nil
	}
	sub := map[string]func(context.Context, *Env, []string) error{
		"verify": auditVerify, "checkpoint": auditCheckpoint, "export": auditExport, "show": auditShow,
	}[args[0]]
	if sub == nil {
		fmt.Fprint(env.Stderr, auditUsage)
		return withExitCode(2, fmt.Errorf("audit: unknown subcommand %q", args[0]))
	}
	return sub(ctx, env, args[1:])
}

// auditFlags parses a subcommand's flags; usage problems exit 2.
func auditFlags(env *Env, name string, args []string, def func(*flag.FlagSet)) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("yett audit "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	def(fs)
	if err := fs.Parse(args); err != nil {
		return nil, withExitCode(2, err)
	}
	if fs.NArg() != 0 {
		return nil, withExitCode(2, fmt.Errorf("audit %s: unexpected argument %q", name, fs.Arg(0)))
	}
	return fs, nil
}

// defaultLog is <data dir>/audit/log.
func defaultLog(env *Env) (string, error) {
	data, err := userdir.DataDir(env.Getenv)
	if err != nil {
		return "", withExitCode(2, err)
	}
	return filepath.Join(data, "audit", audit.LogFile), nil
}

func logPath(env *Env, flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	return defaultLog(env)
}

func auditVerify(_ context.Context, env *Env, args []string) error {
	var logFlag, held, vkey string
	var witnessKeys listFlag
	if _, err := auditFlags(env, "verify", args, func(fs *flag.FlagSet) {
		fs.StringVar(&logFlag, "log", "", "log `FILE` or export (default <data dir>/audit/log)")
		fs.StringVar(&held, "checkpoint", "", "checkpoint `FILE` saved earlier, kept elsewhere, or cosigned by a witness")
		fs.Var(&witnessKeys, "witness-key", "a witness's verifier `KEY` whose cosignature --checkpoint must carry (repeatable)")
		fs.StringVar(&vkey, "key", "", "verifier key to trust (default: verifier.key next to the log)")
	}); err != nil {
		return err
	}
	path, err := logPath(env, logFlag)
	if err != nil {
		return err
	}
	witnesses, err := witnessVerifiers(witnessKeys, held)
	if err != nil {
		return err
	}
	opts := audit.VerifyOptions{VerifierKey: vkey}
	var heldFile []byte
	if held != "" {
		if heldFile, err = os.ReadFile(held); err != nil {
			return withExitCode(2, fmt.Errorf("audit verify: %w", err))
		}
		opts.Held = heldCheckpoint(heldFile)
	}
	var rep audit.Report
	if isExportFile(path) {
		f, err := os.Open(path)
		if err != nil {
			return withExitCode(2, err)
		}
		defer f.Close()
		rep = audit.VerifyExport(f, opts)
	} else {
		rep = audit.Verify(path, opts)
	}
	printReport(env.Stdout, path, rep)
	if rep.Status == audit.StatusIntact && heldFile != nil {
		if err := printCosignatures(env.Stdout, heldFile, opts.Held, witnesses); err != nil {
			return withExitCode(1, err)
		}
	}
	switch rep.Status {
	case audit.StatusIntact:
		return nil
	case audit.StatusTampered:
		return withExitCode(1, errors.New("audit log failed verification (evidence of tampering)"))
	default:
		return withExitCode(2, rep.Err)
	}
}

func isExportFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := io.ReadFull(f, b)
	return audit.IsExport(b[:n])
}

func printReport(w io.Writer, path string, rep audit.Report) {
	fmt.Fprintf(w, "log: %s\n", path)
	if rep.Head.Root == (audit.Head{}).Root {
		// Verification stopped before reading the records.
		fmt.Fprintln(w, "entries: not read")
	} else {
		fmt.Fprintf(w, "entries: %d\n", rep.Entries)
		fmt.Fprintf(w, "tree head: %s\n", rep.Head)
	}
	if rep.Checkpoint != nil {
		fmt.Fprintf(w, "signed checkpoint: %s\n", rep.Checkpoint.Head)
	}
	if rep.Held != nil {
		if rep.HeldOK {
			fmt.Fprintf(w, "held checkpoint: %s: the log extends the held checkpoint\n", rep.Held.Head)
		} else {
			fmt.Fprintf(w, "held checkpoint: %s\n", rep.Held.Head)
		}
	}
	if t := rep.Torn; t != nil {
		fmt.Fprintf(w, "torn tail: %d bytes at offset %d after entry %d (an interrupted append; the writer saves them aside when it reopens)\n", t.Length, t.Offset, t.AfterIndex)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch rep.Status {
	case audit.StatusIntact:
		fmt.Fprintln(w, "OK")
	case audit.StatusTampered:
		where := "the checkpoint"
		if rep.FirstBad >= 0 {
			where = fmt.Sprintf("entry %d", rep.FirstBad)
			if rep.FirstBadOffset >= 0 {
				where += fmt.Sprintf(" (offset %d)", rep.FirstBadOffset)
			}
		}
		fmt.Fprintf(w, "TAMPERED: first bad %s: %v\n", where, rep.Err)
	default:
		fmt.Fprintf(w, "UNREADABLE: %v\n", rep.Err)
	}
}

func auditCheckpoint(_ context.Context, env *Env, args []string) error {
	var logFlag, out string
	if _, err := auditFlags(env, "checkpoint", args, func(fs *flag.FlagSet) {
		fs.StringVar(&logFlag, "log", "", "log `FILE` (default <data dir>/audit/log)")
		fs.StringVar(&out, "out", "", "write the checkpoint to `FILE`")
	}); err != nil {
		return err
	}
	if out == "" {
		return withExitCode(2, errors.New("audit checkpoint: --out is required"))
	}
	path, err := logPath(env, logFlag)
	if err != nil {
		return err
	}
	// Hand out only a checkpoint the log matches: a saved checkpoint is what
	// later proves the log was not cut or rewritten.
	rep := audit.Verify(path, audit.VerifyOptions{})
	if rep.Status != audit.StatusIntact {
		printReport(env.Stderr, path, rep)
		return withExitCode(1+boolInt(rep.Status == audit.StatusUnreadable), errors.New("audit checkpoint: the log does not verify"))
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), audit.CheckpointFile))
	if err != nil {
		return withExitCode(2, err)
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		return withExitCode(2, err)
	}
	cp, _ := audit.ParseCheckpoint(b)
	fmt.Fprintf(env.Stdout, "checkpoint %s written to %s\n", cp.Head, out)
	if n := rep.Entries - cp.Size; n > 0 {
		fmt.Fprintf(env.Stdout, "note: %d newer entries are not signed yet; Yett signs at least every %d entries or %v, at vault lock and at stop\n", n, audit.DefaultCheckpointEvery, audit.DefaultCheckpointAfter)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func auditExport(_ context.Context, env *Env, args []string) error {
	var logFlag, out string
	if _, err := auditFlags(env, "export", args, func(fs *flag.FlagSet) {
		fs.StringVar(&logFlag, "log", "", "log `FILE` (default <data dir>/audit/log)")
		fs.StringVar(&out, "out", "", "write the export to `FILE`")
	}); err != nil {
		return err
	}
	if out == "" {
		return withExitCode(2, errors.New("audit export: --out is required"))
	}
	path, err := logPath(env, logFlag)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	cp, left, err := audit.Export(filepath.Dir(path), &buf)
	if err != nil {
		return withExitCode(2, err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		return withExitCode(2, err)
	}
	fmt.Fprintf(env.Stdout, "exported %s (ciphertext, checkpoints and consistency proofs) to %s\n", cp.Head, out)
	if left > 0 {
		fmt.Fprintf(env.Stdout, "note: %d newer entries are not signed yet and were left out\n", left)
	}
	return nil
}

func auditShow(_ context.Context, env *Env, args []string) error {
	var logFlag, idFile, vaultDir, format string
	var useVault bool
	if _, err := auditFlags(env, "show", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&useVault, "vault", false, "decrypt with the vault's audit key (the default without --identity)")
		fs.StringVar(&logFlag, "log", "", "log `FILE` (default <data dir>/audit/log)")
		fs.StringVar(&idFile, "identity", "", "age identity `FILE` of the audit key (instead of the vault)")
		fs.StringVar(&vaultDir, "vault-dir", "", "vault `DIR` (default the data dir); asks for its passphrase")
		fs.StringVar(&format, "format", "json", "json (one entry per line) or table")
	}); err != nil {
		return err
	}
	if idFile != "" && (vaultDir != "" || useVault) {
		return withExitCode(2, errors.New("audit show: give --identity or --vault, not both"))
	}
	if format != "json" && format != "table" {
		return withExitCode(2, fmt.Errorf("audit show: unknown format %q", format))
	}
	path, err := logPath(env, logFlag)
	if err != nil {
		return err
	}
	var ids age.Identity
	if idFile != "" {
		ids, err = readIdentities(idFile)
	} else {
		if vaultDir == "" {
			vaultDir, err = userdir.DataDir(env.Getenv)
		}
		if err == nil {
			ids, err = identityFromVault(env, vaultDir)
		}
	}
	if err != nil {
		return withExitCode(2, err)
	}
	if rep := audit.Verify(path, audit.VerifyOptions{}); rep.Status != audit.StatusIntact {
		fmt.Fprintf(env.Stderr, "yett: warning: the log does not verify (%s): %v\n", rep.Status, rep.Err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	if format == "table" {
		fmt.Fprintln(tw, "INDEX\tTIME\tTYPE\tSESSION\tREASON\tACTION OR DETAIL")
	}
	enc := json.NewEncoder(env.Stdout)
	for e, err := range audit.ReadEvents(path, ids) {
		if err != nil {
			tw.Flush()
			return withExitCode(2, err)
		}
		if format == "json" {
			enc.Encode(struct {
				Index int64       `json:"index"`
				Event audit.Event `json:"event"`
			}{e.Index, e.Event})
			continue
		}
		ev := e.Event
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.Index, ev.Time.Format("2006-01-02T15:04:05Z07:00"), ev.Type, ev.SessionID, ev.Reason, tableDetail(&ev))
	}
	return tw.Flush()
}

// readIdentities reads an age identity file. Errors never quote the file's
// contents: it holds a private key.
func readIdentities(path string) (age.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit show: %w", err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(io.LimitReader(f, 1<<20))
	if err != nil || len(ids) != 1 {
		return nil, errors.New("audit show: the identity file must hold exactly one age identity")
	}
	return ids[0], nil
}

// tableDetail is the last column of a table row: the action of a call; for
// a revocation drill's entries the drill, its step, verdict, duration and
// evidence; for an inventory edit the row, field and new value.
func tableDetail(ev *audit.Event) string {
	switch {
	case ev.Action != nil:
		out := strings.TrimSpace(ev.Action.Channel + " " + ev.Action.Operation + " " + ev.Action.Target)
		if ev.Via != nil {
			out += "; approved " + viaText(ev.Via)
		}
		return out
	case ev.Via != nil:
		return "approved " + viaText(ev.Via)
	case ev.Drill != nil:
		d := ev.Drill
		out := fmt.Sprintf("%s %s drill %s", ev.AuthorizationID, d.Kind, d.DrillID)
		if d.Trigger != "" {
			out += " (" + d.Trigger + ")"
		}
		if d.Step != "" {
			out += " " + d.Step
		}
		if ev.Success != nil {
			out += map[bool]string{true: " passed", false: " failed"}[*ev.Success]
		}
		if ev.Type != audit.EventDrillStarted {
			out += fmt.Sprintf(" in %d ms", d.DurationMS)
		}
		if d.Evidence != "" {
			out += ": " + d.Evidence
		}
		return out
	case ev.Inventory != nil:
		return strings.TrimSpace(ev.AuthorizationID + " " + ev.Inventory.Field + "=" + ev.Inventory.Value)
	}
	return ""
}

// viaText says how an approval reached Yett: the surface, what was checked
// and what verified the person.
func viaText(v *audit.Via) string {
	out := "at the " + v.Surface
	switch v.Surface {
	case "notification":
		out = "from a notification"
	case "terminal":
		out = "at yett serve's terminal"
	case "desktop card":
		out = "in the window"
	}
	if v.Detail != "" {
		out += " (" + v.Detail + ")"
	}
	if v.Verified != "" {
		out += ", verified: " + v.Verified
	} else {
		out += ", no system verification"
	}
	return out
}
