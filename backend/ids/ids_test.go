package ids

import (
	"regexp"
	"testing"
)

func TestIDsArePrefixedHexAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	re := regexp.MustCompile(`^az-[0-9a-f]{24}$`)
	for range 1000 {
		id := New("az-")
		if !re.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
	if id := Sized("fl-", 9); !regexp.MustCompile(`^fl-[0-9a-f]{18}$`).MatchString(id) {
		t.Fatalf("sized id %q", id)
	}
}
