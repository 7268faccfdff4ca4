package inventory

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// CSVColumns are the exported columns, in seed 002's order (the team's
// export puts the machine and the member before them).
var CSVColumns = []string{
	"provider", "account", "authorization id", "kind", "name", "scopes", "environment", "held on", "owner",
	"backup revoker", "created via", "connected at", "last confirmed use", "last refresh", "review date",
	"last drill", "last drill result", "next drill", "operations", "local disable procedure", "state",
	"under control", "missing",
}

// Export writes the rows matching f as CSV or JSON. A row holds no secret
// and no token, so neither does an export; dates are RFC 3339 in UTC, empty
// when unknown.
func (inv *Inventory) Export(ctx context.Context, f Filter, format string) ([]byte, error) {
	rows, err := inv.Rows(ctx, f)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatJSON:
		return json.MarshalIndent(struct {
			ExportedAt time.Time `json:"exported_at"`
			Rows       []Row     `json:"rows"`
		}{inv.now().UTC(), rows}, "", "  ")
	case FormatCSV:
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(CSVColumns)
		for _, r := range rows {
			w.Write(CSVRecord(r))
		}
		w.Flush()
		return b.Bytes(), w.Error()
	}
	return nil, fmt.Errorf("%w: export as csv or json", ErrInvalid)
}

// CSVRecord is r as the cells of one CSV line, in CSVColumns' order.
func CSVRecord(r Row) []string {
	drill, result := "", ""
	if r.LastDrill != nil {
		drill = date(r.LastDrill.At)
		result = r.LastDrill.Kind + " " + map[bool]string{true: "passed", false: "failed"}[r.LastDrill.Passed]
	}
	return Cells(r.Provider, r.AccountRef, r.ID, r.Kind, r.Name, strings.Join(r.Scopes, " "), r.Environment, r.HeldOn,
		r.Owner, r.BackupRevoker, r.CreatedVia, date(r.ConnectedAt), date(r.LastUsed), date(r.LastRefresh),
		date(r.ReviewBy), drill, result, date(r.NextDrill), strings.Join(r.Operations, " "), r.DisableProcedure,
		r.State, fmt.Sprint(r.Controlled), strings.Join(r.Missing, "; "))
}

// Cells keeps a spreadsheet from reading a cell as a formula (OWASP's CSV
// injection advice): text that starts with = + - @ or a tab gets a quote.
func Cells(vs ...string) []string {
	for i, v := range vs {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			vs[i] = "'" + v
		}
	}
	return vs
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
