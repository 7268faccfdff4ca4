package gateway

import (
	"errors"
	"regexp"
	"testing"
)

// The Windows listener cannot run here; these pure parts of it can.
func TestPipeName(t *testing.T) {
	const sid = "S-1-5-21-3623811015-3361044348-30300820-1013"
	name, err := pipeName(sid, `C:\Users\Ana\AppData\Roaming\Yett\run`)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^\\\\\.\\pipe\\yett-S-1-5-21-3623811015-3361044348-30300820-1013-[0-9a-f]{16}$`)
	if !want.MatchString(name) {
		t.Errorf("pipe name %q", name)
	}
	if len(name) > 256 {
		t.Errorf("pipe name is %d characters, Windows allows 256", len(name))
	}
	same, _ := pipeName(sid, `c:\users\ana\appdata\roaming\yett\RUN`)
	if same != name {
		t.Errorf("case of the runtime directory changed the name: %q vs %q", same, name)
	}
	other, _ := pipeName(sid, `C:\Users\Ana\AppData\Local\Temp\yett-test\run`)
	if other == name {
		t.Error("two runtime directories share a pipe")
	}
	otherUser, _ := pipeName("S-1-5-21-3623811015-3361044348-30300820-1014", `C:\Users\Ana\AppData\Roaming\Yett\run`)
	if otherUser == name {
		t.Error("two users share a pipe")
	}
}

func TestPipeSDDL(t *testing.T) {
	for _, tc := range []struct {
		sid, want string
	}{
		{"S-1-5-21-3623811015-3361044348-30300820-1013", "D:P(A;;GA;;;S-1-5-21-3623811015-3361044348-30300820-1013)"},
		{"S-1-12-1-1234567890-1234567890-1234567890-1234567890", "D:P(A;;GA;;;S-1-12-1-1234567890-1234567890-1234567890-1234567890)"},
		{"S-1-0x1234567890AB-7", "D:P(A;;GA;;;S-1-0x1234567890AB-7)"},
	} {
		t.Run(tc.sid, func(t *testing.T) {
			got, err := pipeSDDL(tc.sid)
			if err != nil || got != tc.want {
				t.Errorf("pipeSDDL = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// A SID that is not one must never reach the SDDL or the pipe name: a
// ")(A;;GA;;;WD" would grant everyone access.
func TestPipeRefusesBadSID(t *testing.T) {
	for _, sid := range []string{
		"", "S-1", "S-1-5", "WD", "BA", "s-1-5-21-1", "S-2-5-21-1",
		"S-1-5-21-1)(A;;GA;;;WD", "S-1-5-21-1;", "S-1-5-21-1\x00", " S-1-5-21-1",
		"S-1-5-21-1\\..\\x", "S-1-5-21-99999999999",
	} {
		if _, err := pipeSDDL(sid); !errors.Is(err, errBadSID) {
			t.Errorf("pipeSDDL(%q) err = %v", sid, err)
		}
		if _, err := pipeName(sid, `C:\x`); !errors.Is(err, errBadSID) {
			t.Errorf("pipeName(%q) err = %v", sid, err)
		}
	}
}
