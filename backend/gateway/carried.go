package gateway

import (
	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/journal"
)

// CarriedAudit reads the audit records that the journal's log in dataDir
// carries for the audit log (New makes the journal carry them; see
// backend/audit Carrier). Every opener of the audit log of a data directory
// passes it as audit.Options.Carried, so that after a power loss the log
// gets back what its file lost before anything is appended.
func CarriedAudit(dataDir string) func() ([]audit.Carried, error) {
	return func() ([]audit.Carried, error) {
		recs, err := journal.ReadCarried(dataDir)
		if err != nil {
			return nil, err
		}
		out := make([]audit.Carried, len(recs))
		for i, c := range recs {
			out[i] = audit.Carried{Log: audit.LogID(c.Log), Offset: c.Offset, Record: c.Record}
		}
		return out, nil
	}
}
