package operation

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/yettdev/yett/backend/feed"
	"github.com/yettdev/yett/backend/store"
	"github.com/yettdev/yett/backend/target"
	"github.com/yettdev/yett/backend/userdir"
)

// ErrConfig: Open was called without a data directory or Authorizations.
var ErrConfig = errors.New("operation: incomplete configuration")

// Authorizations is what the catalogue asks of OAuth custody: whether the
// authorization an operation names exists (in any state), so that none is
// saved for an authorization that is not there. *oauth.Custody satisfies it.
type Authorizations interface {
	AuthorizationExists(id string) (bool, error)
	// APIHosts are the hosts the authorization's token may be sent to.
	APIHosts(id string) ([]target.HostPattern, error)
}

// Config configures a Catalogue. Both fields are required.
type Config struct {
	DataDir        string
	Authorizations Authorizations
}

// Catalogue is the named operations of one data directory. Reads come from
// memory; writes go to the database first. Safe for concurrent use.
type Catalogue struct {
	db   *gorm.DB
	auth Authorizations

	// mu makes writes one at a time, so the copy in memory is replaced in
	// the order the database committed them.
	mu      sync.Mutex
	current atomic.Pointer[listing]
	changes feed.Feed[Change]
}

// Change is one write to the catalogue, for whoever records it (the
// composition root writes each into the audit log).
type Change struct {
	// Saved is the operation as stored (read it, do not modify it), nil
	// for a removal.
	Saved *Operation
	// Removed names the removed operation, "" for a save.
	Removed string
}

// listing is the catalogue as one immutable value: a change builds a new
// one.
type listing struct {
	byName map[string]Operation
	byTool map[string]string // ToolName -> name
	sorted []Operation
}

// Open opens (or creates) operations.db in cfg.DataDir and loads every
// operation into memory. On creation it copies the operations an earlier
// version kept in oauth.db.
func Open(cfg Config) (*Catalogue, error) {
	if cfg.DataDir == "" || cfg.Authorizations == nil {
		return nil, ErrConfig
	}
	if err := userdir.Ensure(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("operation: %w", err)
	}
	db, err := store.Open(filepath.Join(cfg.DataDir, FileName), history(cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("operation: %w", err)
	}
	c := &Catalogue{db: db, auth: cfg.Authorizations}
	if err := c.load(); err != nil {
		store.Close(db)
		return nil, err
	}
	return c, nil
}

// Close closes the database. What was loaded stays readable.
func (c *Catalogue) Close() error { return store.Close(c.db) }

// load reads every operation into a new listing.
func (c *Catalogue) load() error {
	var rows []storedRow
	if err := c.db.Raw(`SELECT name, authorization_id, spec, updated_at FROM operations ORDER BY name`).Scan(&rows).Error; err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	l := &listing{byName: make(map[string]Operation, len(rows)), sorted: make([]Operation, 0, len(rows))}
	for _, r := range rows {
		var o Operation
		if err := json.Unmarshal([]byte(r.Spec), &o); err != nil || o.Name != r.Name {
			return fmt.Errorf("operation: the stored operation %q does not decode", clip(r.Name, 64))
		}
		l.byName[o.Name] = o
		l.sorted = append(l.sorted, o)
	}
	l.index()
	c.current.Store(l)
	return nil
}

// index fills byTool from byName.
func (l *listing) index() {
	l.byTool = make(map[string]string, len(l.byName))
	for name := range l.byName {
		l.byTool[ToolName(name)] = name
	}
}

// Save creates or replaces an operation (by name). It must be valid and its
// authorization must exist; errors wrap ErrInvalid then.
func (c *Catalogue) Save(o Operation) error { return c.save(o, true) }

// Add creates an operation. A name in use is refused (ErrInvalid): adding
// one never rebinds another operation, or another account's, silently.
func (c *Catalogue) Add(o Operation) error { return c.save(o, false) }

func (c *Catalogue) save(o Operation, replace bool) error {
	if err := o.Validate(); err != nil {
		return err
	}
	ok, err := c.auth.AuthorizationExists(o.AuthorizationID)
	if err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: the operation's authorization does not exist", ErrInvalid)
	}
	if err := c.checkHost(o); err != nil {
		return err
	}
	spec, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	// What memory keeps is what a reload would read: the spec as stored.
	var stored Operation
	if err := json.Unmarshal(spec, &stored); err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	c.mu.Lock()
	cur := c.current.Load()
	if _, taken := cur.byName[o.Name]; taken && !replace {
		c.mu.Unlock()
		return errNameTaken(o.Name)
	}
	if other, ok := cur.byTool[ToolName(o.Name)]; ok && other != o.Name {
		c.mu.Unlock()
		return fmt.Errorf("%w: %q would be listed to agents as the same tool as %q (%s): choose a name that differs in its first %d characters",
			ErrInvalid, o.Name, other, ToolName(o.Name), MaxToolName-9)
	}
	onConflict := ` ON CONFLICT(name) DO UPDATE SET authorization_id = excluded.authorization_id, spec = excluded.spec, updated_at = excluded.updated_at`
	if !replace {
		onConflict = ""
	}
	err = c.db.Exec(`INSERT INTO operations (name, authorization_id, spec, updated_at) VALUES (?, ?, ?, ?)`+onConflict,
		o.Name, o.AuthorizationID, string(spec), time.Now().Unix()).Error
	if err == nil {
		c.replace(stored, "")
	}
	c.mu.Unlock()
	if err != nil && !replace && strings.Contains(err.Error(), "UNIQUE") {
		return errNameTaken(o.Name)
	}
	if err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	c.notify(Change{Saved: &stored})
	return nil
}

// checkHost refuses an operation whose URL is not on one of its
// authorization's API hosts: the operation sends that account's token.
func (c *Catalogue) checkHost(o Operation) error {
	hosts, err := c.auth.APIHosts(o.AuthorizationID)
	if err != nil {
		return fmt.Errorf("operation: %w", err)
	}
	u, err := o.HostURL()
	if err != nil {
		return err
	}
	if !target.AnyMatches(hosts, u) {
		names := make([]string, len(hosts))
		for i, h := range hosts {
			names[i] = string(h)
		}
		return fmt.Errorf("%w: the host %s is not one of the authorization's API hosts (%s): an operation sends that account's token, so it goes only to that account's API; declare the host when connecting the account",
			ErrInvalid, u.Host, strings.Join(names, ", "))
	}
	return nil
}

// Remove deletes an operation. ErrNotFound: there was none by that name.
func (c *Catalogue) Remove(name string) error {
	c.mu.Lock()
	res := c.db.Exec(`DELETE FROM operations WHERE name = ?`, name)
	if res.Error == nil && res.RowsAffected > 0 {
		c.replace(Operation{}, name)
	}
	c.mu.Unlock()
	if res.Error != nil {
		return fmt.Errorf("operation: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	c.notify(Change{Removed: name})
	return nil
}

// errNameTaken refuses adding an operation under a name in use.
func errNameTaken(name string) error {
	return fmt.Errorf("%w: an operation named %q exists: remove it first, or choose another name", ErrInvalid, name)
}

// replace builds the next listing with o saved (when it has a name) and
// gone removed. c.mu held.
func (c *Catalogue) replace(o Operation, gone string) {
	old := c.current.Load()
	l := &listing{byName: make(map[string]Operation, len(old.byName)+1)}
	for name, x := range old.byName {
		if name != gone {
			l.byName[name] = x
		}
	}
	if o.Name != "" {
		l.byName[o.Name] = o
	}
	l.sorted = make([]Operation, 0, len(l.byName))
	for _, x := range l.byName {
		l.sorted = append(l.sorted, x)
	}
	slices.SortFunc(l.sorted, func(a, b Operation) int { return strings.Compare(a.Name, b.Name) })
	l.index()
	c.current.Store(l)
}

// Lookup returns the operation by that name, from memory. The operation
// shares its slices with the catalogue: read it, do not modify it.
func (c *Catalogue) Lookup(name string) (Operation, bool) {
	o, ok := c.current.Load().byName[name]
	return o, ok
}

// LookupTool returns the operation listed to agents as tool (ToolName).
func (c *Catalogue) LookupTool(tool string) (Operation, bool) {
	l := c.current.Load()
	o, ok := l.byName[l.byTool[tool]]
	return o, ok
}

// List returns every operation by name, from memory (read them, do not
// modify them).
func (c *Catalogue) List() []Operation {
	return slices.Clone(c.current.Load().sorted)
}

// NamesByAuthorization lists the operations bound to each authorization,
// by name: what the inventory shows on each row.
func (c *Catalogue) NamesByAuthorization() map[string][]string {
	out := map[string][]string{}
	for _, o := range c.current.Load().sorted {
		out[o.AuthorizationID] = append(out[o.AuthorizationID], o.Name)
	}
	return out
}

// Subscribe calls fn after every change, as backend/feed delivers: in
// order, one at a time, on the writer's goroutine after the write. It
// carries no news: fn reads the catalogue for what is there now. It
// returns a function that cancels the subscription.
func (c *Catalogue) Subscribe(fn func()) (cancel func()) {
	return c.changes.Subscribe(func(Change) { fn() })
}

// SubscribeChanges is Subscribe with the news: which operation was saved
// (as stored) or removed.
func (c *Catalogue) SubscribeChanges(fn func(Change)) (cancel func()) {
	return c.changes.Subscribe(fn)
}

func (c *Catalogue) notify(ch Change) { c.changes.Publish(ch) }
