package procid

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/<pid>/stat starttime. It is part of the
// kernel ABI (USER_HZ), 100 on every architecture Go supports, whatever
// CONFIG_HZ the kernel was built with.
const userHZ = 100

// bootInstant is the wall-clock instant of boot with nanosecond precision,
// taken as CLOCK_REALTIME minus CLOCK_BOOTTIME. /proc/stat's btime is whole
// seconds and would round every start time; this does not. NTP may move the
// real-time clock later, which is why comparisons use the raw tick count
// (StartKey) and this value only dates it.
var bootInstant = sync.OnceValue(func() time.Time {
	var rt, bt unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &rt)
	_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &bt)
	return time.Unix(rt.Sec, rt.Nsec).Add(-time.Duration(bt.Nano()))
})

func readProc(pid int) (procInfo, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return procInfo{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
		}
		return procInfo{}, fmt.Errorf("procid: read /proc/%d/stat: %w", pid, err)
	}
	return parseStat(pid, data)
}

// parseStat reads state, ppid and starttime from /proc/<pid>/stat. The
// command name in parentheses may itself contain ") ", so fields are
// counted from the last ')'.
func parseStat(pid int, data []byte) (procInfo, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return procInfo{}, fmt.Errorf("procid: malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(data[end+1:])
	// f[0] is field 3 (state); ppid is field 4, starttime field 22.
	if len(f) < 20 {
		return procInfo{}, fmt.Errorf("procid: short /proc/%d/stat", pid)
	}
	if f[0][0] == 'Z' || f[0][0] == 'X' {
		return procInfo{}, fmt.Errorf("%w: pid %d is a zombie", ErrProcessGone, pid)
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	ticks, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return procInfo{}, fmt.Errorf("procid: malformed /proc/%d/stat", pid)
	}
	since := time.Duration(ticks) * (time.Second / userHZ)
	return procInfo{pid: pid, ppid: ppid, startKey: ticks, startTime: bootInstant().Add(since)}, nil
}

// openExe opens the executable pid actually runs through /proc/<pid>/exe,
// which reaches the running file even if its path was since replaced or
// deleted.
func openExe(pid int) (*os.File, string, FileID, error) {
	link := "/proc/" + strconv.Itoa(pid) + "/exe"
	f, err := os.Open(link)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return nil, "", FileID{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
		}
		return nil, "", FileID{}, fmt.Errorf("procid: open executable of %d: %w", pid, err)
	}
	path, _ := os.Readlink(link)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", FileID{}, fmt.Errorf("procid: stat executable of %d: %w", pid, err)
	}
	return f, path, fileID(fi), nil
}

func statPath(path string) (FileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileID{}, err
	}
	return fileID(fi), nil
}

func fileID(fi fs.FileInfo) FileID {
	st := fi.Sys().(*syscall.Stat_t)
	return FileID{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(),
	}
}

// codeSigner: Linux has no code-signing authority for executables; saying
// so plainly is better than inventing one from a package database.
func codeSigner(int, string) string { return SignerUnsigned }

// processName is the kernel's short name (comm) of pid, for display.
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "?"
	}
	return string(bytes.TrimSuffix(b, []byte("\n")))
}
