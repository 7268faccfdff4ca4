package procid

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readShimStdio names the shim's stdin and stdout through /proc: a pipe's
// two ends share an inode and differ in access mode (fdinfo flags); a
// socket's other end is another socket, which sock_diag names.
func readShimStdio(pid int) shimStdio {
	s := shimStdio{status: stdioEnds}
	for i, end := range []*stdioEnd{&s.in, &s.out} {
		st, ok := readEnd(pid, i)
		if st != stdioEnds {
			return shimStdio{status: st}
		}
		*end = ok
	}
	return s
}

// readEnd reads descriptor fd of pid.
func readEnd(pid, fd int) (stdioStatus, stdioEnd) {
	link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(fd))
	if err != nil {
		return stdioNoEnds, stdioEnd{}
	}
	kind, ino, ok := parseFDLink(link)
	switch {
	case !ok:
		return stdioNoEnds, stdioEnd{}
	case kind == "pipe":
		mode, ok := fdMode(pid, fd)
		if !ok {
			return stdioNoEnds, stdioEnd{}
		}
		return stdioEnds, stdioEnd{ino: ino, mode: mode}
	default:
		if !sockDiagWorks() {
			return stdioUnknown, stdioEnd{}
		}
		peer, err := socketPeer(ino)
		if err != nil || peer == 0 {
			if otherNetns(pid) {
				// sock_diag answers for Yett's own network namespace only:
				// not finding the socket says nothing about who holds it.
				return stdioOtherNetns, stdioEnd{}
			}
			return stdioNoEnds, stdioEnd{}
		}
		return stdioEnds, stdioEnd{ino: ino, socket: true, peer: peer}
	}
}

// otherNetns reports whether pid is in another network namespace than
// this process (both links readable, and different).
func otherNetns(pid int) bool {
	theirs, err1 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	ours, err2 := os.Readlink("/proc/self/ns/net")
	return err1 == nil && err2 == nil && theirs != ours
}

// parseFDLink reads "pipe:[123]" or "socket:[456]".
func parseFDLink(link string) (kind string, ino uint64, ok bool) {
	kind, rest, found := strings.Cut(link, ":[")
	if !found || (kind != "pipe" && kind != "socket") || !strings.HasSuffix(rest, "]") {
		return "", 0, false
	}
	ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return kind, ino, err == nil
}

// fdMode reads the access mode of pid's descriptor fd from fdinfo.
func fdMode(pid, fd int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("flags:")); ok {
			flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
			return int(flags) & unix.O_ACCMODE, err == nil
		}
	}
	return 0, false
}

// relationOf says what pid holds of the shim's stdio.
func (s shimStdio) relationOf(pid int) relation {
	if s.status != stdioEnds {
		return relNone
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	names, err := readDirNames(dir)
	if err != nil {
		return relNone
	}
	var peer, same [2]bool
	for _, name := range names {
		link, err := os.Readlink(dir + name)
		if err != nil {
			continue
		}
		kind, ino, ok := parseFDLink(link)
		if !ok {
			continue
		}
		for i, end := range []stdioEnd{s.in, s.out} {
			switch {
			case end.socket && kind == "socket" && ino == end.peer:
				peer[i] = true
			case end.socket && kind == "socket" && ino == end.ino:
				same[i] = true
			case !end.socket && kind == "pipe" && ino == end.ino:
				fd, _ := strconv.Atoi(name)
				mode, ok := fdMode(pid, fd)
				switch {
				case !ok:
				case mode == unix.O_RDWR: // a FIFO reopened read-write: both ends
					peer[i], same[i] = true, true
				case mode == end.mode:
					same[i] = true
				default:
					peer[i] = true
				}
			}
		}
	}
	switch {
	case peer[0] && peer[1]:
		return relPeer
	case same[0] && same[1]:
		return relSame
	}
	return relNone
}

// soleHolder looks through every process of this user for one holding the
// other ends of the shim's stdio. It answers only when exactly one does:
// with two or more, none of them alone is who acts.
func (s shimStdio) soleHolder(shimPID int) (int, bool) {
	names, err := readDirNames("/proc")
	if err != nil {
		return 0, false
	}
	uid := uint32(os.Getuid())
	holder := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == shimPID {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+name, &st) != nil || st.Uid != uid {
			continue
		}
		if s.relationOf(pid) != relPeer {
			continue
		}
		if holder != 0 {
			return 0, false
		}
		holder = pid
	}
	return holder, holder != 0
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
