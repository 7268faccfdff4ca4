package credimport

import (
	"testing"
	"time"
)

func twoValues(t *testing.T) *Source {
	t.Helper()
	src, err := Read([]byte("A=" + canaryA + "\nB=" + canaryB))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func wiped(src *Source) bool {
	for _, e := range src.Entries {
		if e.Secret.Len() != 0 {
			return false
		}
	}
	return true
}

// An id is taken once; what was taken is the caller's, unwiped.
func TestHeldIsSingleUse(t *testing.T) {
	h := NewHeld(time.Hour, 4)
	src := twoValues(t)
	id, until := h.Put(src)
	if len(id) < 20 || !until.After(time.Now()) {
		t.Fatalf("id %q until %v", id, until)
	}
	got, ok := h.Take(id)
	if !ok || got != src || wiped(got) {
		t.Fatalf("take: %v %v", ok, got)
	}
	if _, ok := h.Take(id); ok {
		t.Fatal("an id was taken twice")
	}
	if _, ok := h.Take("not-an-id"); ok {
		t.Fatal("an unknown id was taken")
	}
	got.Wipe()
}

// Drop, DropAll, a full store and the end of the time given each wipe what
// was kept and nobody can take it after.
func TestHeldWipes(t *testing.T) {
	h := NewHeld(time.Hour, 2)
	a, b := twoValues(t), twoValues(t)
	idA, _ := h.Put(a)
	h.Drop(idA)
	if !wiped(a) {
		t.Fatal("Drop left the values")
	}
	if _, ok := h.Take(idA); ok {
		t.Fatal("a dropped id was taken")
	}

	idB, _ := h.Put(b)
	c, d := twoValues(t), twoValues(t)
	h.Put(c)
	h.Put(d) // the third: b, the oldest, goes
	if !wiped(b) || wiped(c) || wiped(d) {
		t.Fatal("a full store did not wipe the oldest, and only it")
	}
	if _, ok := h.Take(idB); ok || h.Len() != 2 {
		t.Fatalf("after eviction: %d kept", h.Len())
	}
	h.DropAll()
	if !wiped(c) || !wiped(d) || h.Len() != 0 {
		t.Fatal("DropAll left values")
	}
}

func TestHeldExpires(t *testing.T) {
	h := NewHeld(time.Millisecond, 4)
	done := make(chan string, 1)
	h.wiped = func(id string) { done <- id }
	src := twoValues(t)
	id, _ := h.Put(src)
	if got := <-done; got != id {
		t.Fatalf("wiped %q, put %q", got, id)
	}
	if _, ok := h.Take(id); ok || !wiped(src) {
		t.Fatal("an expired source can be taken, or keeps its values")
	}
}
