package credimport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// csvTable is a CSV export: its columns by lower-cased name, and its rows
// with the line each starts on.
type csvTable struct {
	cols map[string]int
	rows []csvRow
}

type csvRow struct {
	line   int
	fields []string
}

// get is the row's value in the first of names that is a column ("" when
// none is, or the row is short).
func (t *csvTable) get(r csvRow, names ...string) string {
	for _, n := range names {
		if i, ok := t.cols[n]; ok && i < len(r.fields) {
			return r.fields[i]
		}
	}
	return ""
}

// readCSV reads an RFC 4180 export (both password managers write one:
// quoted fields may hold commas, quotes and line breaks). A row that
// breaks the quoting stops the reading: after it, no row can be told
// apart from a value.
func readCSV(data []byte) (*csvTable, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, csvError(err)
	}
	t := &csvTable{cols: map[string]int{}}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, seen := t.cols[h]; !seen {
			t.cols[h] = i
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, csvRow{line: line, fields: rec})
		if len(t.rows) > MaxEntries {
			return nil, ErrTooMany
		}
	}
}

// csvError says where the CSV broke; encoding/csv's own text is not used,
// though it quotes no field, so that no future version can.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &LineError{Line: pe.StartLine, Reason: reasonBadQuote}
	}
	return &LineError{Reason: reasonNotCSV}
}

// headerNames are the column names of a CSV header line (already
// lower-cased by firstLine), unquoted.
func headerNames(header string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Split(header, ",") {
		out[strings.Trim(strings.TrimSpace(f), `"`)] = true
	}
	return out
}
