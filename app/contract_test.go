package app

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"testing"
)

// The frontend reaches the backend only through frontend/src/lib/backend.ts.
// Every bound method it calls must exist on the bound service, and every
// bound method should be used, so a rename on either side fails here rather
// than at run time in the window.
func TestFrontendCallsExistingMethods(t *testing.T) {
	src, err := os.ReadFile("../frontend/src/lib/backend.ts")
	if err != nil {
		t.Fatalf("read backend.ts: %v", err)
	}
	services := map[string]reflect.Type{
		"VaultService":     reflect.TypeOf(&VaultService{}),
		"AuditService":     reflect.TypeOf(&AuditService{}),
		"ApprovalService":  reflect.TypeOf(&ApprovalService{}),
		"OAuthService":     reflect.TypeOf(&OAuthService{}),
		"ConnectService":   reflect.TypeOf(&ConnectService{}),
		"InventoryService": reflect.TypeOf(&InventoryService{}),
		"DesktopService":   reflect.TypeOf(&DesktopService{}),
		"SSHService":       reflect.TypeOf(&SSHService{}),
	}
	re := regexp.MustCompile(`\b(VaultService|AuditService|ApprovalService|OAuthService|ConnectService|InventoryService|DesktopService|SSHService)\b[\s\S]{0,40}?\.\s*([A-Z][A-Za-z]+)\s*\(`)
	called := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		called[m[1]+"."+m[2]] = true
	}
	if len(called) == 0 {
		t.Fatal("found no bound method calls in backend.ts: the pattern is out of date")
	}
	for name := range called {
		var svc, method string
		for i := range name {
			if name[i] == '.' {
				svc, method = name[:i], name[i+1:]
			}
		}
		if _, ok := services[svc].MethodByName(method); !ok {
			t.Errorf("backend.ts calls %s, which is not a bound method", name)
		}
	}
	for svc, typ := range services {
		var unused []string
		for i := 0; i < typ.NumMethod(); i++ {
			if n := svc + "." + typ.Method(i).Name; !called[n] {
				unused = append(unused, n)
			}
		}
		sort.Strings(unused)
		if len(unused) > 0 {
			t.Errorf("bound but never called from backend.ts: %v", unused)
		}
	}
}

// The closed sets of values the window checks its answers against are
// generated from the Go side (frontend/src/lib/contract.gen.ts): a value
// added in Go (an authorization that can be "suspended", a revocation that
// is "unverified") reaches the window's parser with the same change, or
// this test fails. YETT_UPDATE_CONTRACT=1 rewrites the file.
func TestWindowEnumsAreGenerated(t *testing.T) {
	const path = "../frontend/src/lib/contract.gen.ts"
	want := windowContract(t)
	got, err := os.ReadFile(path)
	if os.Getenv("YETT_UPDATE_CONTRACT") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil || string(got) != want {
		t.Fatalf("%s is not what the Go side generates (%v): run YETT_UPDATE_CONTRACT=1 go test ./app -run TestWindowEnumsAreGenerated, then fix what no longer type-checks", path, err)
	}
}
