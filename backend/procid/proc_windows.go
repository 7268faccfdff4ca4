package procid

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/windows"
)

// stillActive is STILL_ACTIVE, the exit code of a running process.
const stillActive = 259

// readProc reads pid's creation time (a FILETIME, 100 ns, used exactly) and
// parent. Windows keeps the creator's pid even after the creator exits and
// its pid is reused; Origin rejects a "parent" created after its child.
func readProc(pid int) (procInfo, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return procInfo{}, fmt.Errorf("%w: pid %d: %w", ErrProcessGone, pid, err)
	}
	defer windows.CloseHandle(h)
	info, err := procTimes(h, pid)
	if err != nil {
		return procInfo{}, err
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return procInfo{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
	}
	ppid, err := p.Ppid()
	if err != nil {
		return procInfo{}, fmt.Errorf("procid: parent of %d: %w", pid, err)
	}
	info.ppid = int(ppid)
	return info, nil
}

// procTimes reads the creation time of the process behind h and checks it
// still runs.
func procTimes(h windows.Handle, pid int) (procInfo, error) {
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil || code != stillActive {
		return procInfo{}, fmt.Errorf("%w: pid %d", ErrProcessGone, pid)
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return procInfo{}, fmt.Errorf("procid: process times of %d: %w", pid, err)
	}
	return procInfo{
		pid:       pid,
		startKey:  uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime),
		startTime: time.Unix(0, created.Nanoseconds()),
	}, nil
}

// openExe opens the image file of pid. A running image cannot be
// overwritten on Windows (sharing violation), only renamed away.
func openExe(pid int) (*os.File, string, FileID, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return nil, "", FileID{}, fmt.Errorf("%w: pid %d: %w", ErrProcessGone, pid, err)
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	size := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &size); err != nil {
		return nil, "", FileID{}, fmt.Errorf("procid: image name of %d: %w", pid, err)
	}
	path := windows.UTF16ToString(buf[:size])
	f, err := os.Open(path)
	if err != nil {
		return nil, "", FileID{}, fmt.Errorf("procid: open executable of %d: %w", pid, err)
	}
	id, err := handleFileID(windows.Handle(f.Fd()))
	if err != nil {
		f.Close()
		return nil, "", FileID{}, err
	}
	return f, path, id, nil
}

// fileBasicInfo is FILE_BASIC_INFO; its ChangeTime is Windows' ctime.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

func handleFileID(h windows.Handle) (FileID, error) {
	var bh windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bh); err != nil {
		return FileID{}, fmt.Errorf("procid: file information: %w", err)
	}
	var basic fileBasicInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&basic)), uint32(unsafe.Sizeof(basic))); err != nil {
		return FileID{}, fmt.Errorf("procid: file basic information: %w", err)
	}
	return FileID{
		Dev:     uint64(bh.VolumeSerialNumber),
		Ino:     uint64(bh.FileIndexHigh)<<32 | uint64(bh.FileIndexLow),
		Size:    int64(bh.FileSizeHigh)<<32 | int64(bh.FileSizeLow),
		MtimeNS: bh.LastWriteTime.Nanoseconds(),
		CtimeNS: basic.ChangeTime,
	}, nil
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
