//go:build !linux

package procid

import (
	"crypto/sha256"
	"errors"
	"strings"

	"github.com/shirou/gopsutil/v4/process"
)

// liveProc keeps nothing open on this OS: Matches finds the process by
// its pid and start stamp every time.
type liveProc struct{}

func openLive(int, uint64) (*liveProc, error) { return nil, nil }

func (*liveProc) close() {}

func (*liveProc) cmdLine(pid int) ([]byte, error) { return cmdLineRaw(pid) }

// cmdLineRaw is pid's argv joined by NULs, as Linux reports it.
func cmdLineRaw(pid int) ([]byte, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, errors.Join(ErrProcessGone, err)
	}
	argv, err := p.CmdlineSlice()
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, nil
	}
	return []byte(strings.Join(argv, "\x00") + "\x00"), nil
}

// matches checks rec against the process with its pid: still running with
// the same start stamp, the same executable file and content, the same
// command line.
func (in *Inspector) matches(rec *RunRecord) error {
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
		return errors.Join(ErrExeChanged, err)
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
	raw, err := cmdLineRaw(rec.PID)
	if err != nil {
		return err
	}
	if sha256.Sum256(raw) != rec.CmdLineSHA256 {
		return ErrCmdLineChanged
	}
	if again, err := readProc(rec.PID); err != nil || again.startKey != rec.StartKey {
		return ErrProcessGone
	}
	return nil
}
