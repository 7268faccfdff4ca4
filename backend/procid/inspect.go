package procid

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"time"
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

// Origin finds the process that started a shim and records it: the first
// ancestor of shimPID that runs a different executable than the shim,
// passing over wrappers (a shell, npx) that handed their own stdin and
// stdout on to the shim when the process above them holds the other ends.
// The record says in Stdio whether the origin holds the shim's stdio;
// when it does not (StdioNotHeld), Identify names another origin.
//
// Errors: ErrProcessGone (the shim or an ancestor exited during the walk),
// ErrNoOrigin (nothing above the shim but init), ErrPeerChanged (the tree
// changed under the walk). On such errors the connection must be refused.
// Close the record when done with it.
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
	stdio := readShimStdio(shimPID)
	var named, origin *procInfo
	cur := shim
	for range maxWalk {
		if cur.ppid <= 1 {
			break
		}
		parent, err := parentOf(cur)
		if err != nil {
			return nil, err
		}
		exe, err := exeIDOf(parent.pid)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPeerChanged, err)
		}
		cur = parent
		if exe.sameFile(shimExe) {
			continue // a copy of the shim is never the origin
		}
		if named == nil {
			named = &parent
		}
		if stdio.status != stdioEnds {
			break
		}
		rel := stdio.relationOf(parent.pid)
		if rel == relPeer {
			origin = &parent
			break
		}
		if rel != relSame {
			break
		}
		// A wrapper: it holds the same ends as the shim, as its own stdin
		// and stdout; the process above it may hold the other ends.
	}
	if named == nil {
		return nil, ErrNoOrigin
	}
	state := StdioHeld
	switch {
	case stdio.status == stdioUnknown:
		origin, state = named, StdioNotChecked
	case stdio.status == stdioOtherNetns:
		origin, state = named, StdioOtherNetns
	case origin == nil:
		origin, state = named, StdioNotHeld
	}
	rec, err := in.record(*origin)
	if err != nil {
		return nil, err
	}
	rec.Stdio = state
	if err := in.addShim(rec, shim, shimExe); err != nil {
		rec.Close()
		return nil, err
	}
	return rec, nil
}

// parentOf reads cur's parent and makes sure it really is cur's parent.
func parentOf(cur procInfo) (procInfo, error) {
	parent, err := readProc(cur.ppid)
	if err != nil {
		return procInfo{}, fmt.Errorf("%w: parent of %d: %w", ErrPeerChanged, cur.pid, err)
	}
	// If cur still has the same parent after we read the parent, that
	// parent did not exit meanwhile (cur would have been reparented), so
	// what we read belongs to the real parent, not to a reused pid.
	if again, err := readProc(cur.pid); err != nil || again.ppid != cur.ppid || again.startKey != cur.startKey {
		return procInfo{}, fmt.Errorf("%w: %d was reparented", ErrPeerChanged, cur.pid)
	}
	// A parent cannot be younger than its child; one that is holds a
	// reused pid (Windows keeps a dead creator's pid as the parent).
	if parent.startKey > cur.startKey {
		return procInfo{}, fmt.Errorf("%w: parent pid %d was reused", ErrPeerChanged, cur.ppid)
	}
	return parent, nil
}

// actingOrigin is the origin when the process that started the shim does
// not hold its stdio, or Yett cannot see whether it does (named.Stdio is
// StdioNotHeld or StdioOtherNetns): the one process of
// this user that holds the other ends, or else the shim itself. Naming
// the holder shows the person the process that would act; naming the shim
// says that no process Yett can name drives this connection, and binds an
// approval to the shim's own run, which ends when it exits. Either way
// the process that started the shim gets no approval it did not ask for
// (seed 000: a helper acts through its parent or asks for itself).
func (in *Inspector) actingOrigin(named *RunRecord) (*RunRecord, error) {
	shimPID := named.ShimPID
	stdio := readShimStdio(shimPID)
	target, state := shimPID, StdioNotHeld
	if stdio.status == stdioOtherNetns {
		state = StdioOtherNetns
	}
	if stdio.status == stdioEnds {
		if h, ok := stdio.soleHolder(shimPID); ok {
			target, state = h, StdioHeldNotParent
			if isAncestor(h, shimPID) {
				state = StdioHeld
			}
		}
	}
	p, err := readProc(target)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPeerChanged, err)
	}
	rec, err := in.record(p)
	if err != nil {
		return nil, err
	}
	// The record pins the process now; it must still hold the ends.
	if target != shimPID && stdio.relationOf(target) != relPeer {
		rec.Close()
		return nil, fmt.Errorf("%w: %d let go of the shim's stdio", ErrPeerChanged, target)
	}
	rec.Stdio = state
	rec.ShimPID, rec.ShimExePath, rec.ShimExeSHA256 = named.ShimPID, named.ShimExePath, named.ShimExeSHA256
	rec.ShimStartTime, rec.ShimParent = named.ShimStartTime, named.ShimParent
	return rec, nil
}

// isAncestor reports whether pid is above child in the process tree.
func isAncestor(pid, child int) bool {
	cur := child
	for range maxWalk {
		info, err := readProc(cur)
		if err != nil || info.ppid <= 0 {
			return false
		}
		if info.ppid == pid {
			return true
		}
		cur = info.ppid
	}
	return false
}

// addShim records the shim's own facts and who started it.
func (in *Inspector) addShim(rec *RunRecord, shim procInfo, shimExe FileID) error {
	var err error
	rec.ShimPID, rec.ShimStartTime = shim.pid, shim.startTime
	if rec.ShimExePath, rec.ShimExeSHA256, err = in.exeHash(shim.pid, shimExe); err != nil {
		return err
	}
	rec.ShimParent = processFacts(shim.ppid)
	if again, err := readProc(shim.pid); err != nil || again.startKey != shim.startKey {
		return ErrPeerChanged
	}
	return nil
}

// record inspects p fully. The nonce is drawn last, after every fact is in.
func (in *Inspector) record(p procInfo) (*RunRecord, error) {
	live, err := openLive(p.pid, p.startKey)
	if err != nil {
		return nil, err
	}
	rec, err := in.inspect(p, live)
	if err != nil {
		live.close()
		return nil, err
	}
	return rec, nil
}

func (in *Inspector) inspect(p procInfo, live *liveProc) (*RunRecord, error) {
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
		live:      live,
	}
	raw, err := live.cmdLine(p.pid)
	if err != nil {
		return nil, err
	}
	rec.CmdLineSHA256 = sha256.Sum256(raw)
	rec.CmdLine = displayCmdLine(splitArgs(raw))
	rec.Signer = codeSigner(p.pid, path)
	rec.Name = sanitize(processName(p.pid), maxName)
	rec.Parents = parentChain(p.ppid)
	// The facts above are only the origin's if it is still the same
	// process running the same program now: a pid reused mid-inspection
	// shows a new start stamp, an execve another file or command line.
	if err := in.matches(rec); err != nil {
		return nil, err
	}
	rec.InspectedAt = time.Now()
	rec.LaunchNonce = newLaunchNonce()
	return rec, nil
}

// Matches re-checks rec against the live process: still running, same
// kernel start stamp, same running executable (device and inode, and its
// content hashed again when its size, times or ctime moved), same command
// line. It returns nil or an error wrapping ErrProcessGone, ErrPIDReused,
// ErrExeChanged, ErrCmdLineChanged or ErrExeChangedOnDisk.
//
// The running image decides, not the file at the path it was started from:
// a hard link, chmod or touch (ctime, link count, mode, times) and an
// upgrade or reinstall that puts another file at the path change nothing the
// process runs, so none of them ends its run. A new process started from
// the new file is another run, with its own card.
//
// It runs before every call. On Linux a record from Origin or Identify
// keeps the process open, and Matches re-reads only what can change: a
// poll of the pidfd, one stat of the running executable and one read of
// the command line.
func (in *Inspector) Matches(rec *RunRecord) error { return in.matches(rec) }

// processFacts describes pid for display, its command line with what
// looks like a secret hidden (it is shown on cards); a process that is
// gone shows only its pid.
func processFacts(pid int) ProcessFacts {
	pf := ProcessFacts{PID: pid}
	if pid <= 0 {
		return pf
	}
	info, err := readProc(pid)
	if err != nil {
		return pf
	}
	pf.StartTime = info.startTime
	pf.Name = sanitize(processName(pid), maxName)
	if raw, err := cmdLineRaw(pid); err == nil {
		pf.CmdLine = displayCmdLine(redactArgs(splitArgs(raw)))
	}
	return pf
}

// splitArgs turns the kernel's NUL-separated argv into arguments.
func splitArgs(raw []byte) []string {
	raw = bytes.TrimSuffix(raw, []byte{0})
	if len(raw) == 0 {
		return nil
	}
	parts := bytes.Split(raw, []byte{0})
	args := make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args
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
