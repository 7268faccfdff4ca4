package procid

import (
	"fmt"
	"time"
)

// Process is what Yett pins of a process that is not an agent but whose
// word it takes (the notification server): who it is, what it runs and
// who started it.
type Process struct {
	PID       int
	StartKey  uint64
	StartTime time.Time
	Name      string
	ExePath   string
	ExeSHA256 [32]byte
	// Lineage runs from the process's parent upwards, each with its
	// kernel start stamp, so that a later pid reuse is not taken for the
	// same ancestor.
	Lineage []Stamp
}

// Stamp names one process exactly: its pid and kernel start stamp.
type Stamp struct {
	PID      int
	StartKey uint64
}

// maxLineage bounds the walk up the parent chain.
const maxLineage = 64

// Describe inspects pid: its start stamp, running executable (hashed from
// the running image) and parent chain. The facts are the process's only if
// it still has the start stamp read first, which Describe checks last.
func Describe(pid int) (Process, error) {
	info, err := readProc(pid)
	if err != nil {
		return Process{}, err
	}
	f, path, id, err := openExe(pid)
	if err != nil {
		return Process{}, err
	}
	defer f.Close()
	sum, err := (*hashCache)(nil).sum(f, id)
	if err != nil {
		return Process{}, fmt.Errorf("procid: hash executable of %d: %w", pid, err)
	}
	p := Process{PID: pid, StartKey: info.startKey, StartTime: info.startTime, ExePath: path, ExeSHA256: sum,
		Name: sanitize(processName(pid), maxName)}
	for cur := info.ppid; cur > 0 && len(p.Lineage) < maxLineage; {
		up, err := readProc(cur)
		if err != nil {
			break
		}
		p.Lineage = append(p.Lineage, Stamp{PID: cur, StartKey: up.startKey})
		cur = up.ppid
	}
	if again, err := readProc(pid); err != nil || again.startKey != info.startKey {
		return Process{}, fmt.Errorf("%w: pid %d", ErrPIDReused, pid)
	}
	return p, nil
}

// HasAncestor says whether a process with this pid is among p's
// ancestors. By pid alone: a pid used again since only makes the answer
// more cautious.
func (p Process) HasAncestor(pid int) bool {
	for _, a := range p.Lineage {
		if a.PID == pid {
			return true
		}
	}
	return false
}

// ExeHash is the running executable's hash as Yett prints and stores it.
func (p Process) ExeHash() string { return hashString(p.ExeSHA256) }
