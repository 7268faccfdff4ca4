package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrAddressTaken is returned by New on Windows when the gateway's named
// pipe already exists. The gateway holds the runtime directory's lock and a
// named pipe disappears with its last handle, so an existing pipe was made
// by some other program: serving through it would hand our agents to it.
var ErrAddressTaken = errors.New("gateway: the gateway's named pipe already exists and was not created by this gateway")

// errBadSID refuses anything that is not a plain textual SID before it is
// pasted into a pipe name or an SDDL string.
var errBadSID = errors.New("gateway: not a textual SID")

// sidPattern is the SDDL form of a SID: S-1, an identifier authority
// (decimal, or hex above 2^32) and at least one sub-authority. Nothing else
// may reach the SDDL: a ")" or ";" would add access control entries.
var sidPattern = regexp.MustCompile(`^S-1-(?:[0-9]{1,10}|0x[0-9A-Fa-f]{1,12})(?:-[0-9]{1,10}){1,15}$`)

// pipeName is the gateway's named pipe on Windows for the user whose SID is
// sid and the runtime directory dir. The SID makes it per user; the hash of
// the runtime directory keeps one pipe per runtime directory, as the Unix
// socket inside it does (tests and YETT_RUNTIME_DIR get their own). Windows
// paths are case-insensitive, so dir is hashed lower-cased. The name is
// public and predictable on purpose: what protects it is that the gateway
// creates it as the first instance with an owner-only descriptor and the
// shim checks who serves it.
func pipeName(sid, dir string) (string, error) {
	if !sidPattern.MatchString(sid) {
		return "", errBadSID
	}
	sum := sha256.Sum256([]byte(strings.ToLower(dir)))
	return `\\.\pipe\yett-` + sid + "-" + hex.EncodeToString(sum[:8]), nil
}

// pipeSDDL is the security descriptor of the gateway's pipe: a protected
// DACL (P: no inherited entries) with a single entry granting GENERIC_ALL to
// the user's own SID. Everyone else, SYSTEM and Administrators included, is
// denied by omission: no Yett client runs as them, and SYSTEM or an
// administrator could take the object over with their privileges anyway, so
// listing them would add no function and only more callers to refuse. No
// mandatory label is set, so the default medium label with no-write-up
// keeps the user's own low-integrity and AppContainer processes out too.
func pipeSDDL(sid string) (string, error) {
	if !sidPattern.MatchString(sid) {
		return "", errBadSID
	}
	return fmt.Sprintf("D:P(A;;GA;;;%s)", sid), nil
}
