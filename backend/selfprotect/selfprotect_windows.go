package selfprotect

import (
	"fmt"
	"strings"

	"golang.org/x/sys/windows"
)

// processSDDL is the DACL Harden sets on its own process: SYSTEM keeps
// full access; OWNER RIGHTS (every process of the user, this one included,
// and the owner's implicit READ_CONTROL and WRITE_DAC) gets only
// PROCESS_TERMINATE (0x1), PROCESS_QUERY_LIMITED_INFORMATION (0x1000),
// READ_CONTROL (0x20000) and SYNCHRONIZE (0x100000). `P` protects it from
// inherited entries.
const processSDDL = "D:P(A;;GA;;;SY)(A;;0x121001;;;OW)"

// Harden replaces this process's DACL with processSDDL.
func Harden() error {
	sd, err := windows.SecurityDescriptorFromString(processSDDL)
	if err != nil {
		return fmt.Errorf("selfprotect: %w", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("selfprotect: %w", err)
	}
	if err := windows.SetSecurityInfo(windows.CurrentProcess(), windows.SE_KERNEL_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("selfprotect: setting the process DACL: %w", err)
	}
	return nil
}

// Hardened reports whether this process's DACL is the one Harden sets.
func Hardened() bool {
	sd, err := windows.GetSecurityInfo(windows.CurrentProcess(), windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return false
	}
	want, err := windows.SecurityDescriptorFromString(processSDDL)
	if err != nil {
		return false
	}
	return dacl(sd.String()) == dacl(want.String())
}

// dacl is an SDDL DACL without its control flags: what grants access. The
// protected flag ("D:P") only stops inheritance, which a process object
// never receives; Wine does not keep it, Windows does.
func dacl(sddl string) string { return strings.Replace(sddl, "D:P(", "D:(", 1) }
