package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientsFile, in the data directory, says which MCP clients called a tool
// through Yett and when each last did (the Connect page shows it). It is a
// convenience, not a record: the audit log is the history, and this file
// holds no secret, no target and nothing an approval depends on.
const ClientsFile = "clients.json"

// ClientSeen is an MCP client as it names itself (initialize's clientInfo,
// or the request's _meta in the 2026-07-28 protocol: the client's word,
// not verified), the program the kernel says ran it, and when it last
// called a tool through Yett.
type ClientSeen struct {
	Name     string    `json:"name"`
	Version  string    `json:"version,omitempty"`
	Program  string    `json:"program,omitempty"`
	PID      int       `json:"pid,omitempty"`
	LastCall time.Time `json:"last_call"`
}

// maxClientsSeen bounds the file: the oldest names go first.
const maxClientsSeen = 32

// clientBook keeps ClientSeen per name and writes them to the data
// directory off the call path: a call only updates the map and wakes the
// writer, which writes at most once per clientFlushEvery.
type clientBook struct {
	path string
	mu   sync.Mutex
	seen map[string]ClientSeen
	kick chan struct{}
	done chan struct{}
}

var clientFlushEvery = time.Second

func openClientBook(dataDir string) *clientBook {
	b := &clientBook{path: filepath.Join(dataDir, ClientsFile), seen: map[string]ClientSeen{},
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	if list, err := ReadClients(dataDir); err == nil {
		for _, c := range list {
			b.seen[c.Name] = c
		}
	}
	return b
}

// run writes the book when woken, until stop; then once more.
func (b *clientBook) run(stop <-chan struct{}) {
	defer close(b.done)
	for {
		select {
		case <-b.kick:
			select {
			case <-time.After(clientFlushEvery):
			case <-stop:
			}
			b.write()
		case <-stop:
			select {
			case <-b.kick:
				b.write()
			default:
			}
			return
		}
	}
}

// saw notes a tool call by the client info names, from the program the
// gateway identified.
func (b *clientBook) saw(info *mcp.Implementation, program string, pid int, at time.Time) {
	// The same client again (a clean name, as stored): only its time moves.
	if info != nil {
		b.mu.Lock()
		if c, ok := b.seen[info.Name]; ok && c.Version == info.Version && c.Program == program && c.PID == pid {
			c.LastCall = at.UTC()
			b.seen[info.Name] = c
			b.mu.Unlock()
			b.wake()
			return
		}
		b.mu.Unlock()
	}
	name := "(unnamed client)"
	version := ""
	if info != nil {
		if n := clip(info.Name, 64); n != "" {
			name = n
		}
		version = clip(info.Version, 32)
	}
	b.mu.Lock()
	b.seen[name] = ClientSeen{Name: name, Version: version, Program: clip(program, 64), PID: pid, LastCall: at.UTC()}
	for len(b.seen) > maxClientsSeen {
		oldest := ""
		for n, c := range b.seen {
			if oldest == "" || c.LastCall.Before(b.seen[oldest].LastCall) {
				oldest = n
			}
		}
		delete(b.seen, oldest)
	}
	b.mu.Unlock()
	b.wake()
}

// wake tells the writer the book changed.
func (b *clientBook) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

func (b *clientBook) list() []ClientSeen {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ClientSeen, 0, len(b.seen))
	for _, c := range b.seen {
		out = append(out, c)
	}
	sortClients(out)
	return out
}

// write replaces the file in one rename. It is not synced: losing the
// last second of it to a power cut costs a "last called" time, never a
// call, and the call path keeps its one fsync.
func (b *clientBook) write() {
	data, _ := json.MarshalIndent(b.list(), "", "  ")
	tmp := b.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err == nil {
		os.Rename(tmp, b.path)
	}
}

func sortClients(list []ClientSeen) {
	slices.SortFunc(list, func(a, b ClientSeen) int {
		if c := b.LastCall.Compare(a.LastCall); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// ReadClients reads the clients file in dataDir, newest call first; no
// file is an empty list. A file that does not parse is an error (and is
// replaced by the gateway's next write).
func ReadClients(dataDir string) ([]ClientSeen, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, ClientsFile))
	if errors.Is(err, os.ErrNotExist) {
		return []ClientSeen{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	var list []ClientSeen
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("gateway: %s does not parse: %w", ClientsFile, err)
	}
	for i := range list {
		list[i].Name, list[i].Version, list[i].Program = clip(list[i].Name, 64), clip(list[i].Version, 32), clip(list[i].Program, 64)
	}
	sortClients(list)
	return list, nil
}

// clip keeps at most n printable runes of s, without control characters
// (a client names itself: it may send anything).
func clip(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			break
		}
		if !unicode.IsPrint(r) {
			continue
		}
		b.WriteRune(r)
		n--
	}
	return strings.TrimSpace(b.String())
}
