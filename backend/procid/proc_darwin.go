package procid

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"
)

// szomb is SZOMB from <sys/proc.h>: exited, not yet reaped.
const szomb = 5

// readProc asks the kernel (sysctl kern.proc.pid) for pid's parent and
// start time. p_starttime has microsecond precision; it is used exactly.
func readProc(pid int) (procInfo, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procInfo{}, fmt.Errorf("procid: sysctl kern.proc.pid %d: %w", pid, err)
	}
	if int(kp.Proc.P_pid) != pid || kp.Proc.P_stat == szomb {
		return procInfo{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
	}
	tv := kp.Proc.P_starttime
	return procInfo{
		pid:       pid,
		ppid:      int(kp.Eproc.Ppid),
		startKey:  uint64(tv.Sec)*1_000_000 + uint64(tv.Usec),
		startTime: time.Unix(tv.Sec, int64(tv.Usec)*1000),
	}, nil
}

// openExe opens the file at pid's executable path (proc_pidpath, through
// gopsutil). macOS has no handle on the running image like Linux's
// /proc/<pid>/exe, so a file replaced after launch is seen here as the new
// file; the code signature check (Security framework, against the running
// code) is what covers that gap on this OS.
func openExe(pid int) (*os.File, string, FileID, error) {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, "", FileID{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
	}
	path, err := p.Exe()
	if err != nil {
		return nil, "", FileID{}, fmt.Errorf("procid: executable path of %d: %w", pid, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", FileID{}, fmt.Errorf("procid: open executable of %d: %w", pid, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", FileID{}, err
	}
	return f, path, fileID(fi), nil
}

func fileID(fi fs.FileInfo) FileID {
	st := fi.Sys().(*syscall.Stat_t)
	return FileID{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MtimeNS: st.Mtimespec.Nano(), CtimeNS: st.Ctimespec.Nano(),
	}
}

func processName(pid int) string {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return "?"
	}
	name, err := p.Name()
	if err != nil {
		return "?"
	}
	return name
}
