//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/credimport"
)

// What yett credential import shows of a file, and how the person chooses
// from it. Everything shown comes from credimport's Entry, which holds the
// value only in its Secret: the list says what a value looks like and how
// long it is, never the value. Names and hosts are the file's text, so
// they pass through terminalSafe as an agent's text would.

// readImportFile reads the file the person named once, read-only. It is
// opened without blocking (a FIFO would block a plain open) and refused
// unless it is a regular file no larger than credimport reads; its bytes
// and times are left as they were (reading changes no mtime). The caller
// wipes what it returns.
func readImportFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > credimport.MaxInput:
		return nil, fmt.Errorf("%s: %w", path, credimport.ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, credimport.MaxInput+1))
	if err != nil {
		clear(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// formatWords says what a file was read as.
func formatWords(f credimport.Format) string {
	switch f {
	case credimport.FormatBitwardenJSON:
		return "a Bitwarden export (JSON)"
	case credimport.FormatBitwardenCSV:
		return "a Bitwarden export (CSV)"
	case credimport.FormatOnePasswordCSV:
		return "a 1Password export (CSV)"
	}
	return ".env lines"
}

// nameTaken says whether a stored credential (or one added earlier in
// this import) has name; names compare as the app compares them, without
// case.
func nameTaken(taken map[string]bool, name string) bool {
	return taken[strings.ToLower(strings.TrimSpace(name))]
}

// writeImportList writes one numbered line per entry: its name, where it
// is in the file, the user name, what its value looks like and how long
// it is, and the host it suggests; or why it cannot be imported. A name a
// stored credential has is marked.
// The user name column shows only when an entry has one (.env lines
// have none).
func writeImportList(w io.Writer, src *credimport.Source, taken map[string]bool) {
	users := false
	for i := range src.Entries {
		users = users || src.Entries[i].Username != ""
	}
	user := func(e *credimport.Entry) string {
		if !users {
			return ""
		}
		return orText(terminalSafe(e.Username), "-") + "\t"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "  #\tNAME\tLINE\t"
	if users {
		header += "USER\t"
	}
	fmt.Fprintln(tw, header+"VALUE\tSUGGESTED HOST")
	for i := range src.Entries {
		e := &src.Entries[i]
		name := e.SuggestedName()
		shown := orText(terminalSafe(name), "(not named)")
		if !e.Importable() {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%scannot be imported: %s\n", i+1, shown, e.Line, user(e), e.Problem)
			continue
		}
		host := orText(terminalSafe(e.Host), "none")
		if nameTaken(taken, name) {
			host += "; a credential already has this name"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%s%s, %s\t%s\n", i+1, shown, e.Line, user(e), e.Kind, characters(e.Length), host)
	}
	tw.Flush()
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return fmt.Sprintf("%d characters", n)
}

// errChooseNone is an empty choice: nothing is imported.
var errChooseNone = errors.New("nothing was chosen")

// parseChoice reads the person's choice of entries, "all" or numbers and
// ranges counted from 1 ("1,3-4", spaces allowed), against importable
// (one per entry). It returns the chosen entries' indexes in the file's
// order, each once; "all" is every entry that can be imported, and a
// number of one that cannot is refused with why.
func parseChoice(s string, src *credimport.Source) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errChooseNone
	}
	n := len(src.Entries)
	chosen := make([]bool, n)
	if strings.EqualFold(s, "all") {
		some := false
		for i := range src.Entries {
			chosen[i] = src.Entries[i].Importable()
			some = some || chosen[i]
		}
		if !some {
			return nil, errors.New("no entry can be imported")
		}
	} else {
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			lo, hi, err := choiceRange(part, n)
			if err != nil {
				return nil, err
			}
			for i := lo; i <= hi; i++ {
				if e := &src.Entries[i-1]; !e.Importable() {
					return nil, fmt.Errorf("entry %d cannot be imported: %s", i, e.Problem)
				}
				chosen[i-1] = true
			}
		}
	}
	var out []int
	for i, c := range chosen {
		if c {
			out = append(out, i)
		}
	}
	return out, nil
}

// choiceRange reads "3" or "3-4" as entry numbers from 1 to n.
func choiceRange(part string, n int) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(part, "-")
	if lo, err = choiceNumber(a, n); err != nil {
		return 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = choiceNumber(b, n); err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("%d-%d counts down: write %d-%d", lo, hi, hi, lo)
		}
	}
	return lo, hi, nil
}

func choiceNumber(s string, n int) (int, error) {
	i, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an entry's number (say numbers such as 1,3-4, or all)", s)
	}
	if i < 1 || i > n {
		return 0, fmt.Errorf("there is no entry %d: they are numbered 1 to %d", i, n)
	}
	return i, nil
}
