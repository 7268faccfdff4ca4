package lockwatch

import (
	"testing"

	"github.com/godbus/dbus/v5"
)

func TestClassifyScreenSaver(t *testing.T) {
	tests := []struct {
		name string
		sig  dbus.Signal
		want Reason
	}{
		{"freedesktop true", dbus.Signal{Name: "org.freedesktop.ScreenSaver.ActiveChanged", Body: []any{true}}, ScreenLocked},
		{"gnome true", dbus.Signal{Name: "org.gnome.ScreenSaver.ActiveChanged", Body: []any{true}}, ScreenLocked},
		{"false", dbus.Signal{Name: "org.gnome.ScreenSaver.ActiveChanged", Body: []any{false}}, ""},
		{"unknown interface", dbus.Signal{Name: "org.example.ScreenSaver.ActiveChanged", Body: []any{true}}, ""},
		{"prefix trick", dbus.Signal{Name: "x.org.gnome.ScreenSaver.ActiveChanged", Body: []any{true}}, ""},
		{"other member", dbus.Signal{Name: "org.gnome.ScreenSaver.WakeUpScreen", Body: []any{true}}, ""},
		{"empty body", dbus.Signal{Name: "org.gnome.ScreenSaver.ActiveChanged"}, ""},
		{"variant not bool", dbus.Signal{Name: "org.gnome.ScreenSaver.ActiveChanged", Body: []any{dbus.MakeVariant(true)}}, ""},
		{"logind on session bus", dbus.Signal{Name: login1Manager + ".PrepareForSleep", Path: login1Path, Body: []any{true}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyScreenSaver(&tt.sig); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassifyLogin1(t *testing.T) {
	hint := func(iface string, v any) []any {
		return []any{iface, map[string]dbus.Variant{"LockedHint": dbus.MakeVariant(v)}, []string{}}
	}
	other := dbus.ObjectPath("/org/freedesktop/login1/session/_99")
	tests := []struct {
		name    string
		sig     dbus.Signal
		session dbus.ObjectPath
		want    Reason
	}{
		{"sleep", dbus.Signal{Name: login1Manager + ".PrepareForSleep", Path: login1Path, Body: []any{true}}, ourSession, Sleep},
		{"sleep without session", dbus.Signal{Name: login1Manager + ".PrepareForSleep", Path: login1Path, Body: []any{true}}, "", Sleep},
		{"resume", dbus.Signal{Name: login1Manager + ".PrepareForSleep", Path: login1Path, Body: []any{false}}, ourSession, ""},
		{"sleep on wrong path", dbus.Signal{Name: login1Manager + ".PrepareForSleep", Path: "/", Body: []any{true}}, ourSession, ""},
		{"shutdown is not sleep", dbus.Signal{Name: login1Manager + ".PrepareForShutdown", Path: login1Path, Body: []any{true}}, ourSession, ""},
		{"lock ours", dbus.Signal{Name: login1Session + ".Lock", Path: ourSession}, ourSession, ScreenLocked},
		{"lock other", dbus.Signal{Name: login1Session + ".Lock", Path: other}, ourSession, ""},
		{"lock unknown session", dbus.Signal{Name: login1Session + ".Lock", Path: ourSession}, "", ""},
		{"unlock", dbus.Signal{Name: login1Session + ".Unlock", Path: ourSession}, ourSession, ""},
		{"hint true", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: hint(login1Session, true)}, ourSession, ScreenLocked},
		{"hint false", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: hint(login1Session, false)}, ourSession, ""},
		{"hint not bool", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: hint(login1Session, "true")}, ourSession, ""},
		{"hint other interface", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: hint("org.example.Foo", true)}, ourSession, ""},
		{"hint other session", dbus.Signal{Name: propertiesSignal, Path: other, Body: hint(login1Session, true)}, ourSession, ""},
		{"hint short body", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: []any{login1Session}}, ourSession, ""},
		{"hint wrong map", dbus.Signal{Name: propertiesSignal, Path: ourSession, Body: []any{login1Session, map[string]bool{"LockedHint": true}}}, ourSession, ""},
		{"screensaver on system bus", dbus.Signal{Name: "org.gnome.ScreenSaver.ActiveChanged", Body: []any{true}}, ourSession, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyLogin1(&tt.sig, tt.session); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzClassify feeds both classifiers signals of every shape a bus peer can
// send us. They must never panic, and a lock must always come from a signal
// that says so.
func FuzzClassify(f *testing.F) {
	f.Add("org.gnome.ScreenSaver.ActiveChanged", "/org/gnome/ScreenSaver", uint8(1), true, "")
	f.Add(login1Manager+".PrepareForSleep", string(login1Path), uint8(1), true, "")
	f.Add(login1Session+".Lock", string(ourSession), uint8(0), false, "")
	f.Add(propertiesSignal, string(ourSession), uint8(3), true, login1Session)
	f.Add(propertiesSignal, string(ourSession), uint8(4), true, "LockedHint")
	f.Add("org.freedesktop.ScreenSaver.ActiveChanged", "/ScreenSaver", uint8(2), false, "true")
	f.Fuzz(func(t *testing.T, name, path string, shape uint8, b bool, s string) {
		var body []any
		switch shape % 7 {
		case 1:
			body = []any{b}
		case 2:
			body = []any{s}
		case 3:
			body = []any{s, map[string]dbus.Variant{"LockedHint": dbus.MakeVariant(b)}, []string{}}
		case 4:
			body = []any{login1Session, map[string]dbus.Variant{s: dbus.MakeVariant(b)}, []string{s}}
		case 5:
			body = []any{int32(len(s)), b}
		case 6:
			body = []any{dbus.MakeVariant(b), nil, map[string]any{s: b}}
		}
		sig := &dbus.Signal{Name: name, Path: dbus.ObjectPath(path), Body: body}
		if r := classifyScreenSaver(sig); r != "" && (r != ScreenLocked || !firstBool(body)) {
			t.Fatalf("screensaver %q %v -> %q", name, body, r)
		}
		r := classifyLogin1(sig, ourSession)
		switch {
		case r == "":
		case r == Sleep && name == login1Manager+".PrepareForSleep" && firstBool(body):
		case r == ScreenLocked && sig.Path == ourSession && (name == login1Session+".Lock" || lockedHintSet(body)):
		default:
			t.Fatalf("login1 %q %q %v -> %q", name, path, body, r)
		}
	})
}
