package app

import (
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// A tray host's side of the tray test: the StatusNotifierWatcher an item
// registers with, and the dbusmenu read as a host reads it.

// trayWatcher owns org.kde.StatusNotifierWatcher, as a tray host does, and
// keeps who registered an item.
type trayWatcher struct{ registered chan string }

func (w *trayWatcher) RegisterStatusNotifierItem(sender dbus.Sender, path string) *dbus.Error {
	if path == "/StatusNotifierItem" {
		w.registered <- string(sender)
	}
	return nil
}

func startTrayWatcher(t *testing.T, addr string) *trayWatcher {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &trayWatcher{registered: make(chan string, 4)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the watcher's name: %v %v", r, err)
	}
	return w
}

func (w *trayWatcher) waitRegistered(t *testing.T) string {
	t.Helper()
	select {
	case s := <-w.registered:
		return s
	case <-time.After(60 * time.Second):
		t.Fatal("no tray item registered with the watcher")
		return ""
	}
}

type trayEntry struct {
	id               int32
	label            string
	enabled, visible bool
}

type trayEntries struct {
	list []trayEntry
	byID map[int32]trayEntry
}

func (e trayEntries) find(t *testing.T, label string) int32 {
	t.Helper()
	for _, it := range e.list {
		if it.label == label && it.visible {
			return it.id
		}
	}
	t.Fatalf("no item %q in the menu %+v", label, e.list)
	return 0
}

// hidden is the first hidden item (a slot the menu does not use now).
func (e trayEntries) hidden(t *testing.T) int32 {
	t.Helper()
	for _, it := range e.list {
		if !it.visible {
			return it.id
		}
	}
	t.Fatalf("no hidden item in %+v", e.list)
	return 0
}

// waitMenu reads the menu over dbusmenu until its first item says header.
func waitMenu(t *testing.T, menu dbus.BusObject, header string) trayEntries {
	t.Helper()
	var e trayEntries
	waitFor(t, func() bool {
		var rev uint32
		var root struct {
			ID       int32
			Props    map[string]dbus.Variant
			Children []dbus.Variant
		}
		if err := menu.Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &root); err != nil {
			t.Fatalf("GetLayout: %v", err)
		}
		e = trayEntries{byID: map[int32]trayEntry{}}
		for _, v := range root.Children {
			f, ok := v.Value().([]any)
			if !ok || len(f) < 2 {
				t.Fatalf("a menu item %#v", v.Value())
			}
			props, _ := f[1].(map[string]dbus.Variant)
			if props["type"].Value() == "separator" {
				continue
			}
			it := trayEntry{id: f[0].(int32), visible: true}
			it.label, _ = props["label"].Value().(string)
			it.enabled, _ = props["enabled"].Value().(bool)
			if v, ok := props["visible"]; ok {
				it.visible, _ = v.Value().(bool)
			}
			e.list = append(e.list, it)
			e.byID[it.id] = it
		}
		return len(e.list) > 0 && e.list[0].label == header && e.list[0].visible
	})
	return e
}
