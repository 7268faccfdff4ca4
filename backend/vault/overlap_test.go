package vault

import (
	"errors"
	"testing"
)

func TestCheckBindings(t *testing.T) {
	v, _ := newUnlocked(t, testOptions(nil))
	add := func(name string, hosts, paths []string) CredentialView {
		t.Helper()
		c := sampleCredential(name, "CANARY-overlap-"+name)
		c.Hosts, c.PathPrefixes = hosts, paths
		view, err := v.Credentials().Add(c)
		if err != nil {
			t.Fatal(err)
		}
		return view
	}
	github := add("github", []string{"api.github.com"}, []string{"/repos/"})
	add("wide", []string{"*.example.com"}, nil)
	add("local", []string{"127.0.0.1:8080"}, nil)

	cases := []struct {
		name         string
		hosts, paths []string
		except       string
		want         []string // other credential names, in order
		duplicate    bool
		winner       Winner
		example      string
	}{
		{"duplicate", []string{"api.github.com"}, []string{"/repos/"}, "", []string{"github"}, true, WinnerNone, "https://api.github.com/repos/"},
		{"narrower path wins", []string{"api.github.com"}, []string{"/repos/yett/"}, "", []string{"github"}, false, WinnerCandidate, "https://api.github.com/repos/yett/"},
		{"wider path loses", []string{"API.GitHub.com"}, []string{"/"}, "", []string{"github"}, false, WinnerOther, "https://api.github.com/repos/"},
		{"disjoint paths", []string{"api.github.com"}, []string{"/user"}, "", nil, false, "", ""},
		{"path segment boundary", []string{"api.github.com"}, []string{"/repos"}, "", []string{"github"}, false, WinnerOther, "https://api.github.com/repos/"},
		{"exact beats wildcard", []string{"a.example.com"}, nil, "", []string{"wide"}, false, WinnerCandidate, "https://a.example.com/"},
		{"wildcard below exact", []string{"*.example.com"}, []string{"/v1"}, "", []string{"wide"}, false, WinnerCandidate, "https://any.example.com/v1"},
		{"wildcard does not cover its parent", []string{"example.com"}, nil, "", nil, false, "", ""},
		{"two labels down is not covered", []string{"a.b.example.com"}, nil, "", nil, false, "", ""},
		{"another port", []string{"127.0.0.1:9090"}, nil, "", nil, false, "", ""},
		{"the same port", []string{"127.0.0.1:8080"}, nil, "", []string{"local"}, true, WinnerNone, "https://127.0.0.1:8080/"},
		{"default ports meet 443", []string{"api.github.com:443"}, []string{"/repos/"}, "", []string{"github"}, false, WinnerCandidate, "https://api.github.com/repos/"},
		{"no default port meets 8443", []string{"api.github.com:8443"}, nil, "", nil, false, "", ""},
		{"the credential being edited is not its own duplicate", []string{"api.github.com"}, []string{"/repos/"}, github.ID, nil, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := v.Credentials().CheckBindings(c.hosts, c.paths, c.except)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want overlaps with %v", got, c.want)
			}
			for i, o := range got {
				if o.Other.Name != c.want[i] {
					t.Fatalf("overlap %d is %q, want %q", i, o.Other.Name, c.want[i])
				}
			}
			if len(got) == 0 {
				return
			}
			o := got[0]
			if o.Duplicate != c.duplicate || o.Winner != c.winner || o.Example != c.example {
				t.Fatalf("got duplicate=%v winner=%q example=%q, want %v %q %q", o.Duplicate, o.Winner, o.Example, c.duplicate, c.winner, c.example)
			}
		})
	}

	// A third, more specific credential takes the example from both.
	add("repos-yett", []string{"api.github.com"}, []string{"/repos/yett/"})
	got, err := v.Credentials().CheckBindings([]string{"api.github.com"}, []string{"/repos/yett/x"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Other.Name != "github" || got[0].Winner != WinnerCandidate {
		t.Fatalf("with a third credential: %+v", got)
	}
	// An exact host beats a wildcard before paths count: for the example
	// shared with "github", "repos-yett" is the most specific.
	got, _ = v.Credentials().CheckBindings([]string{"*.github.com"}, []string{"/repos/yett/x"}, "")
	if len(got) != 2 || got[0].Winner != WinnerThird || got[0].WinnerName != "repos-yett" || got[1].Winner != WinnerOther {
		t.Fatalf("the third credential should win the example: %+v", got)
	}

	v.Lock("t")
	if _, err := v.Credentials().CheckBindings([]string{"api.github.com"}, nil, ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("locked: %v", err)
	}
}
