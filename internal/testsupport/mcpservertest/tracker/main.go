// Command tracker serves mcpservertest's Tracker (a remote MCP server
// behind an OAuth authorization server) on 127.0.0.1, for the browser
// test (build/scripts/e2e.sh). It prints its MCP endpoint's URL on one
// line once it listens.
//
// usage: tracker ISSUER INTROSPECTION_URL
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/yettdev/yett/internal/testsupport/mcpservertest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: tracker ISSUER INTROSPECTION_URL")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracker:", err)
		os.Exit(1)
	}
	_, h := mcpservertest.NewTracker("http://"+ln.Addr().String(), os.Args[1], os.Args[2])
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "tracker:", err)
		os.Exit(1)
	}
}
