package procid

import (
	"errors"
	"fmt"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// Inspector builds and re-checks run records. It holds the executable-hash
// cache; one Inspector serves the whole gateway and is safe for concurrent
// use.
type Inspector struct {
	cache *hashCache
	// NoCache disables the executable-hash cache (benchmarks, paranoia).
	NoCache bool
}

// NewInspector returns an Inspector with an empty hash cache.
func NewInspector() *Inspector { return &Inspector{cache: &hashCache{}} }

func (in *Inspector) hashes() *hashCache {
	if in.NoCache {
		return nil
	}
	return in.cache
}

// procInfo is what the kernel says about one process at one moment.
type procInfo struct {
	pid, ppid int
	startKey  uint64
	startTime time.Time
}

// maxWalk bounds the walk up the process tree: a shim wrapped in a few
// shells is normal, a chain of dozens of copies is not.
const maxWalk = 32

// Origin finds the process the user approves for a shim: the first ancestor
// of shimPID that runs a different executable than the shim, and records it.
//
// Errors: ErrProcessGone (the shim or an ancestor exited during the walk),
// ErrNoOrigin (nothing above the shim but init), ErrPeerChanged (the tree
// changed under the walk). On such errors the connection must be refused.
func (in *Inspector) Origin(shimPID int) (*RunRecord, error) {
	shim, err := readProc(shimPID)
	if err != nil {
		return nil, err
	}
	if shim.ppid <= 1 {
		return nil, ErrNoOrigin
	}
	shimExe, err := exeIDOf(shimPID)
	if err != nil {
		return nil, err
	}
	cur := shim
	for range maxWalk {
		if cur.ppid <= 1 {
			return nil, ErrNoOrigin
		}
		parent, err := readProc(cur.ppid)
		if err != nil {
			return nil, fmt.Errorf("%w: parent of %d: %w", ErrPeerChanged, cur.pid, err)
		}
		// If cur still has the same parent after we read the parent, that
		// parent did not exit meanwhile (cur would have been reparented),
		// so what we read belongs to the real parent, not to a reused pid.
		if again, err := readProc(cur.pid); err != nil || again.ppid != cur.ppid || again.startKey != cur.startKey {
			return nil, fmt.Errorf("%w: %d was reparented", ErrPeerChanged, cur.pid)
		}
		// A parent cannot be younger than its child; one that is holds a
		// reused pid (Windows keeps a dead creator's pid as the parent).
		if parent.startKey > cur.startKey {
			return nil, fmt.Errorf("%w: parent pid %d was reused", ErrPeerChanged, cur.ppid)
		}
		exe, err := exeIDOf(parent.pid)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPeerChanged, err)
		}
		if !exe.sameFile(shimExe) {
			rec, err := in.record(parent)
			if err != nil {
				return nil, err
			}
			rec.ShimPID = shimPID
			if rec.ShimExePath, rec.ShimExeSHA256, err = in.exeHash(shimPID, shimExe); err != nil {
				return nil, err
			}
			if again, err := readProc(shimPID); err != nil || again.startKey != shim.startKey {
				return nil, ErrPeerChanged
			}
			return rec, nil
		}
		cur = parent
	}
	return nil, ErrNoOrigin
}

// record inspects p fully. The nonce is drawn last, after every fact is in.
func (in *Inspector) record(p procInfo) (*RunRecord, error) {
	f, path, id, err := openExe(p.pid)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum, err := in.hashes().sum(f, id)
	if err != nil {
		return nil, fmt.Errorf("procid: hash executable of %d: %w", p.pid, err)
	}
	rec := &RunRecord{
		PID:       p.pid,
		StartTime: p.startTime,
		StartKey:  p.startKey,
		ExePath:   path,
		ExeID:     id,
		ExeSHA256: sum,
		PPID:      p.ppid,
	}
	rec.Signer = codeSigner(p.pid, path)
	rec.Name, rec.CmdLine = displayFacts(p.pid)
	rec.Parents = parentChain(p.ppid)
	// The facts above are only the origin's if it is still the same
	// process now; a pid reused mid-inspection shows a new start stamp.
	again, err := readProc(p.pid)
	if err != nil {
		return nil, err
	}
	if again.startKey != p.startKey {
		return nil, ErrPIDReused
	}
	// An execve keeps the start stamp, so check the executable too.
	if now, err := exeIDOf(p.pid); err != nil || !now.sameFile(id) {
		return nil, ErrExeChanged
	}
	rec.InspectedAt = time.Now()
	rec.LaunchNonce = newLaunchNonce()
	return rec, nil
}

// Matches re-checks rec against the live process: still running, same
// kernel start stamp, same executable file and content, and the file at the
// recorded path is still that file. It returns nil or an error wrapping
// ErrProcessGone, ErrPIDReused, ErrExeChanged or ErrExeChangedOnDisk.
func (in *Inspector) Matches(rec *RunRecord) error {
	live, err := readProc(rec.PID)
	if err != nil {
		return err
	}
	if live.startKey != rec.StartKey {
		return ErrPIDReused
	}
	f, _, id, err := openExe(rec.PID)
	if err != nil {
		if errors.Is(err, ErrProcessGone) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrExeChanged, err)
	}
	defer f.Close()
	if !id.sameFile(rec.ExeID) {
		return ErrExeChanged
	}
	if id != rec.ExeID {
		sum, err := in.hashes().sum(f, id)
		if err != nil || sum != rec.ExeSHA256 {
			return ErrExeChangedOnDisk
		}
	}
	onDisk, err := statPath(rec.ExePath)
	if err != nil || onDisk != rec.ExeID {
		return ErrExeChangedOnDisk
	}
	if again, err := readProc(rec.PID); err != nil || again.startKey != rec.StartKey {
		return ErrProcessGone
	}
	return nil
}

// displayFacts returns the sanitized name and command line of pid; they are
// for people only, so a failure yields a placeholder, not an error.
func displayFacts(pid int) (name, cmdline string) {
	name = sanitize(processName(pid), maxName)
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return name, ""
	}
	argv, _ := p.CmdlineSlice()
	return name, displayCmdLine(argv)
}

// parentChain lists the ancestors from pid upwards for display.
func parentChain(pid int) []Ancestor {
	var chain []Ancestor
	for i := 0; i < 8 && pid > 0; i++ {
		info, err := readProc(pid)
		if err != nil {
			break
		}
		chain = append(chain, Ancestor{PID: pid, Name: sanitize(processName(pid), maxName)})
		pid = info.ppid
	}
	return chain
}

// exeHash hashes pid's executable, which must still be the file want.
func (in *Inspector) exeHash(pid int, want FileID) (string, [32]byte, error) {
	f, path, id, err := openExe(pid)
	if err != nil {
		return "", [32]byte{}, err
	}
	defer f.Close()
	if !id.sameFile(want) {
		return "", [32]byte{}, fmt.Errorf("%w: shim %d ran another executable", ErrPeerChanged, pid)
	}
	sum, err := in.hashes().sum(f, id)
	return path, sum, err
}

// exeIDOf returns only the identity of pid's executable.
func exeIDOf(pid int) (FileID, error) {
	f, _, id, err := openExe(pid)
	if err != nil {
		return FileID{}, err
	}
	f.Close()
	return id, nil
}
