package procid

import "os"

// Self records this very process as a run, as Origin records an agent: the
// composition root's own client of the gateway (the revocation drill's),
// which talks to it in process and has no shim. The record's Stdio is
// StdioNotChecked: no shim's stdio exists to check. Close it when done.
func (in *Inspector) Self() (*RunRecord, error) {
	p, err := readProc(os.Getpid())
	if err != nil {
		return nil, err
	}
	rec, err := in.record(p)
	if err != nil {
		return nil, err
	}
	rec.Stdio = StdioNotChecked
	return rec, nil
}
