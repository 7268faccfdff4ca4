package action

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

// portServer records the client port of every request by the credential
// it carried, and every connection state change.
type portServer struct {
	*httptest.Server
	mu     sync.Mutex
	ports  map[string]map[string]bool // Authorization -> remote ports
	closed map[string]bool            // remote addresses whose connection closed
	hits   int
}

func startPortServer(t *testing.T, addr string, h http.HandlerFunc) *portServer {
	t.Helper()
	ps := &portServer{ports: map[string]map[string]bool{}, closed: map[string]bool{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := net.SplitHostPort(r.RemoteAddr)
		ps.mu.Lock()
		a := r.Header.Get("Authorization")
		if ps.ports[a] == nil {
			ps.ports[a] = map[string]bool{}
		}
		ps.ports[a][port] = true
		ps.hits++
		ps.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			ps.mu.Lock()
			ps.closed[c.RemoteAddr().String()] = true
			ps.mu.Unlock()
		}
	}
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen on %s: %v", addr, err)
		}
		srv.Listener.Close()
		srv.Listener = ln
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ps.Server = srv
	return ps
}

func (ps *portServer) portsOf(auth string) map[string]bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := map[string]bool{}
	for p := range ps.ports[auth] {
		out[p] = true
	}
	return out
}

func (ps *portServer) hitCount() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.hits
}

func credFor(secret string, internal bool) *Credential {
	return &Credential{Injection: Injection{Format: InjectBearer}, Secret: secretSource{secret: secret}, InternalHost: internal}
}

// TestConnectionsNeverSharedAcrossCredentials: two credentials bound to the
// same host each reuse their own connections, and never the other's,
// sequentially or concurrently.
func TestConnectionsNeverSharedAcrossCredentials(t *testing.T) {
	srv := startPortServer(t, "", nil)
	ex := New(Config{})
	a, b := credFor("CANARY-pool-a-1f2e3d", false), credFor("CANARY-pool-b-4c5b6a", false)
	for i := 0; i < 10; i++ {
		for _, c := range []*Credential{a, b} {
			if _, err := ex.Do(context.Background(), Request{URL: srv.URL + "/x"}, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(c *Credential) {
			defer wg.Done()
			if _, err := ex.Do(context.Background(), Request{URL: srv.URL + "/y"}, c); err != nil {
				t.Error(err)
			}
		}([]*Credential{a, b}[i%2])
	}
	wg.Wait()
	pa, pb := srv.portsOf("Bearer CANARY-pool-a-1f2e3d"), srv.portsOf("Bearer CANARY-pool-b-4c5b6a")
	for p := range pa {
		if pb[p] {
			t.Fatalf("connection from port %s carried both credentials", p)
		}
	}
	if len(pa) == 0 || len(pa) > 11 || len(pb) == 0 || len(pb) > 11 {
		t.Fatalf("ports a %v b %v: connections are not reused", pa, pb)
	}
}

// TestRebindingNeverReusesConnection: a name that now resolves elsewhere
// gets a new connection to the address checked now; one that now resolves
// to a refused address, or a policy that refuses the old address, is
// refused before any idle connection could carry the request.
func TestRebindingNeverReusesConnection(t *testing.T) {
	one := startPortServer(t, "127.0.0.1:0", nil)
	port := one.Listener.Addr().(*net.TCPAddr).Port
	two := startPortServer(t, "127.0.0.2:"+strconv.Itoa(port), nil)
	var mu sync.Mutex
	answer := "127.0.0.1"
	res := &mapResolver{next: func(string, int) []netip.Addr {
		mu.Lock()
		defer mu.Unlock()
		return addrs(answer)
	}}
	rebind := func(a string) { mu.Lock(); answer = a; mu.Unlock() }
	ex := New(Config{Resolver: res, Timeout: 2 * time.Second})
	u := "http://rebind.test:" + strconv.Itoa(port) + "/"
	internalCred := credFor(canary, true)
	if _, err := ex.Do(context.Background(), Request{URL: u}, internalCred); err != nil {
		t.Fatal(err)
	}
	rebind("127.0.0.2")
	if _, err := ex.Do(context.Background(), Request{URL: u}, internalCred); err != nil {
		t.Fatal(err)
	}
	if one.hitCount() != 1 || two.hitCount() != 1 {
		t.Fatalf("hits %d/%d: the idle connection to the old address carried the request", one.hitCount(), two.hitCount())
	}
	rebind("169.254.169.254")
	if _, err := ex.Do(context.Background(), Request{URL: u}, internalCred); !errors.Is(err, ErrForbiddenTarget) {
		t.Fatalf("rebound to metadata: %v", err)
	}
	rebind("127.0.0.1")
	// Same secret, but no binding names an internal host: the idle
	// connection to 127.0.0.1 is not this policy's.
	if _, err := ex.Do(context.Background(), Request{URL: u}, credFor(canary, false)); !errors.Is(err, ErrForbiddenTarget) && !errors.Is(err, ErrInsecureScheme) {
		t.Fatalf("policy without internal hosts: %v", err)
	}
	if _, err := ex.Do(context.Background(), Request{URL: one.URL}, nil); !errors.Is(err, ErrForbiddenTarget) {
		t.Fatalf("no credential to loopback: %v", err)
	}
	if one.hitCount() != 1 || two.hitCount() != 1 {
		t.Fatalf("hits %d/%d after refusals", one.hitCount(), two.hitCount())
	}
}

// TestCancelClosesConnection: cancelling a request's context while the
// server holds it, or while its body is being read, closes the connection
// at once; CloseIdleConnections closes the idle ones and the next request
// dials anew.
func TestCancelClosesConnection(t *testing.T) {
	started := make(chan string, 4)
	srv := startPortServer(t, "", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hold":
			started <- r.RemoteAddr
			<-r.Context().Done()
		case "/trickle":
			w.Write([]byte("first part"))
			w.(http.Flusher).Flush()
			started <- r.RemoteAddr
			<-r.Context().Done()
		default:
			w.Write([]byte("ok"))
		}
	})
	ex := New(Config{})
	cred := credFor(canary, false)
	waitClosed := func(addr string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			srv.mu.Lock()
			done := srv.closed[addr]
			srv.mu.Unlock()
			if done {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("connection %s still open", addr)
	}
	for _, path := range []string{"/hold", "/trickle"} {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := ex.Do(ctx, Request{URL: srv.URL + path}, cred); errc <- err }()
		addr := <-started
		cancel()
		if err := <-errc; err == nil {
			t.Fatalf("%s: a cancelled request succeeded", path)
		}
		waitClosed(addr)
	}
	before := srv.portsOf("Bearer " + canary)
	if _, err := ex.Do(context.Background(), Request{URL: srv.URL + "/"}, cred); err != nil {
		t.Fatal(err)
	}
	var idle string
	for p := range srv.portsOf("Bearer " + canary) {
		if !before[p] {
			idle = "127.0.0.1:" + p
		}
	}
	ex.CloseIdleConnections()
	waitClosed(idle)
	if _, err := ex.Do(context.Background(), Request{URL: srv.URL + "/"}, cred); err != nil {
		t.Fatal(err)
	}
	if after := srv.portsOf("Bearer " + canary); len(after) != len(before)+2 {
		t.Fatalf("ports before %v after %v: a connection from before CloseIdleConnections was reused", before, after)
	}
}
