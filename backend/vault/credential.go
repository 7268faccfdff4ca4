package vault

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// InjectionFormat says how the gateway puts a secret into a request.
type InjectionFormat string

const (
	InjectBearer InjectionFormat = "bearer" // Authorization: Bearer <secret>
	InjectHeader InjectionFormat = "header" // <HeaderName>: Template with {secret} replaced
	InjectBasic  InjectionFormat = "basic"  // Authorization: Basic base64(Username:secret)
)

// Approval says how often a person must approve the credential's use.
type Approval string

const (
	ApprovalSession Approval = "session"  // once per agent run
	ApprovalPerCall Approval = "per_call" // every call
	// ApprovalWrites: reads pass, writes ask. Reads (GET and HEAD) go on
	// the run's session approval; every other call gets its own card.
	ApprovalWrites Approval = "writes"
)

// AsksEachCall says whether a call needs a card of its own, beyond the
// run's session approval (which every call needs); read says the call only
// reads (an HTTP GET or HEAD, an SSH command a read-only rule allows).
func (a Approval) AsksEachCall(read bool) bool {
	return a == ApprovalPerCall || a == ApprovalWrites && !read
}

// SecretPlaceholder is replaced by the secret in a header template.
const SecretPlaceholder = "{secret}"

// Injection describes how the secret is injected.
type Injection struct {
	Format     InjectionFormat `json:"format"`
	HeaderName string          `json:"header_name,omitempty"`
	Template   string          `json:"template,omitempty"`
	Username   string          `json:"username,omitempty"`
}

// NewCredential is what a person enters to add an HTTP credential.
type NewCredential struct {
	Name         string
	Secret       Secret
	Injection    Injection
	Hosts        []string
	PathPrefixes []string // empty means "/"
	Approval     Approval
	// RotateEveryDays asks for a reminder to rotate the secret this many
	// days after it was entered; 0 (the default) asks for none.
	RotateEveryDays int
}

// CredentialView is a credential without its secret: safe for the UI, logs
// and agents. It says nothing about the secret, not even its length.
type CredentialView struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Injection    Injection `json:"injection"`
	Hosts        []string  `json:"hosts"`
	PathPrefixes []string  `json:"path_prefixes"`
	Approval     Approval  `json:"approval"`
	CreatedAt    time.Time `json:"created_at"`
	// UpdatedAt is when the credential last changed (an edit or a new
	// secret); SecretSetAt when its current secret was entered. Records
	// written before these existed report CreatedAt for both.
	UpdatedAt   time.Time `json:"updated_at"`
	SecretSetAt time.Time `json:"secret_set_at"`
	Version     uint64    `json:"version"`
	// RotateEveryDays is the rotation reminder (0: none). RotationDueAt is
	// when it falls due (zero without one); RotationDue says it had, as
	// of the List that made this view (other views leave it false).
	RotateEveryDays int       `json:"rotate_every_days,omitempty"`
	RotationDueAt   time.Time `json:"rotation_due_at,omitzero"`
	RotationDue     bool      `json:"rotation_due,omitempty"`
}

// MaxRotateEveryDays bounds a rotation reminder: ten years.
const MaxRotateEveryDays = 3650

// rotationDueAt is when a secret entered at secretSet falls due under a
// reminder of days (zero for none). Days are 24 h: a reminder is a
// nudge, not a deadline to the minute.
func rotationDueAt(secretSet time.Time, days int) time.Time {
	if days <= 0 {
		return time.Time{}
	}
	return secretSet.Add(time.Duration(days) * 24 * time.Hour)
}

// MaxSecretLen is the longest secret the vault stores, in bytes.
const MaxSecretLen = 16 << 10

// validate checks c and returns it normalised (lower-case hosts, default
// path). Errors wrap ErrInvalid and never quote the secret.
func (c NewCredential) validate() (NewCredential, error) {
	fail := func(format string, a ...any) (NewCredential, error) {
		return NewCredential{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
	}
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" || utf8.RuneCountInString(c.Name) > 100 || !utf8.ValidString(c.Name) || hasControl(c.Name) {
		return fail("name must be 1..100 printable characters")
	}
	switch n := c.Secret.Len(); {
	case n == 0:
		return fail("secret is empty")
	case n > MaxSecretLen:
		return fail("secret is longer than %d bytes", MaxSecretLen)
	case bytes.ContainsAny(c.Secret.b, "\r\n\x00"):
		return fail("secret contains a line break or NUL byte, which cannot go into an HTTP header")
	}
	inj, err := c.Injection.validate()
	if err != nil {
		return NewCredential{}, err
	}
	c.Injection = inj
	if len(c.Hosts) == 0 {
		return fail("at least one host is required")
	}
	seen := map[string]bool{}
	hosts := make([]string, 0, len(c.Hosts))
	for _, h := range c.Hosts {
		p, err := ParseHostPattern(strings.TrimSpace(h))
		if err != nil {
			return fail("%v", err)
		}
		if seen[p.String()] {
			return fail("host %q is listed twice", p.String())
		}
		seen[p.String()] = true
		hosts = append(hosts, p.String())
	}
	c.Hosts = hosts
	if len(c.PathPrefixes) == 0 {
		c.PathPrefixes = []string{"/"}
	}
	paths := make([]string, 0, len(c.PathPrefixes))
	seenPath := map[string]bool{}
	for _, p := range c.PathPrefixes {
		p, err := ParsePathPrefix(strings.TrimSpace(p))
		if err != nil {
			return fail("%v", err)
		}
		if seenPath[p] {
			return fail("path prefix %q is listed twice", p)
		}
		seenPath[p] = true
		paths = append(paths, p)
	}
	c.PathPrefixes = paths
	if c.Approval != ApprovalSession && c.Approval != ApprovalPerCall && c.Approval != ApprovalWrites {
		return fail("approval must be %q, %q or %q", ApprovalSession, ApprovalPerCall, ApprovalWrites)
	}
	if c.RotateEveryDays < 0 || c.RotateEveryDays > MaxRotateEveryDays {
		return fail("a rotation reminder is 1 to %d days, or none", MaxRotateEveryDays)
	}
	return c, nil
}

func (in Injection) validate() (Injection, error) {
	fail := func(format string, a ...any) (Injection, error) {
		return Injection{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
	}
	switch in.Format {
	case InjectBearer:
		if in.HeaderName != "" || in.Template != "" || in.Username != "" {
			return fail("bearer injection takes no header name, template or username")
		}
	case InjectHeader:
		if !isToken(in.HeaderName) {
			return fail("header injection needs a valid header name (letters, digits and !#$%%&'*+-.^_`|~)")
		}
		if strings.Count(in.Template, SecretPlaceholder) != 1 {
			return fail("header template must contain %s exactly once", SecretPlaceholder)
		}
		if hasControl(in.Template) || len(in.Template) > 1024 {
			return fail("header template must be printable and at most 1024 characters")
		}
		if in.Username != "" {
			return fail("header injection takes no username")
		}
	case InjectBasic:
		if in.Username == "" || strings.Contains(in.Username, ":") || hasControl(in.Username) || len(in.Username) > 256 {
			return fail("basic injection needs a username without ':' or control characters")
		}
		if in.HeaderName != "" || in.Template != "" {
			return fail("basic injection takes no header name or template")
		}
	default:
		return fail("injection format must be %q, %q or %q", InjectBearer, InjectHeader, InjectBasic)
	}
	return in, nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func isToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}

// credentialRecord is the plaintext sealed in a "credential" record.
type credentialRecord struct {
	Name         string    `json:"name"`
	Secret       []byte    `json:"secret"`
	Injection    Injection `json:"injection"`
	Hosts        []string  `json:"hosts"`
	PathPrefixes []string  `json:"path_prefixes"`
	Approval     Approval  `json:"approval"`
	CreatedAt    time.Time `json:"created_at"`
	// Optional: absent from records written before edits and rotation
	// existed, which decode with CreatedAt in their place.
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	SecretSetAt *time.Time `json:"secret_set_at,omitempty"`
	// Absent when no reminder is set, so a record without one reads the
	// same in a Yett from before reminders (which refuses unknown fields).
	RotateEveryDays int `json:"rotate_every_days,omitempty"`
}

// credentialRecordIn is credentialRecord as decoded: the secret's JSON
// string is kept raw and decoded by decodeSecretField into memory the vault
// owns and wipes. Letting encoding/json decode the base64 left a copy of
// the secret in the heap that nothing could clear (one call of yett serve
// left five).
type credentialRecordIn struct {
	credentialRecord
	Secret json.RawMessage `json:"secret"`
}

// decodeSecretField decodes the record's "secret", a JSON string of
// standard base64 (what encoding/json writes for []byte, with no escapes).
func decodeSecretField(raw json.RawMessage) ([]byte, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, errors.New("credential record is not valid JSON of the expected shape")
	}
	b64 := raw[1 : len(raw)-1]
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(out, b64)
	if err != nil {
		clear(out)
		return nil, errors.New("credential record's secret is not valid base64")
	}
	return out[:n], nil
}

// decodeSecret reads only the secret of a credential record that was
// decoded and validated in full when it was verified (at unlock, or when
// this process wrote it): what a call needs, without building and checking
// the rest again.
func decodeSecret(plaintext []byte) (Secret, error) {
	var r struct {
		Secret json.RawMessage `json:"secret"`
	}
	if err := json.Unmarshal(plaintext, &r); err != nil {
		return Secret{}, errors.New("credential record is not valid JSON of the expected shape")
	}
	secret, err := decodeSecretField(r.Secret)
	clear(r.Secret)
	if err != nil {
		return Secret{}, err
	}
	return Secret{b: secret}, nil
}

// credentialTimes are the times a credential record carries.
type credentialTimes struct{ created, updated, secretSet time.Time }

// decodeCredential parses an opened credential record. The record was
// authenticated, but the format could still be from a future version, so
// it is validated like new input.
func decodeCredential(id string, version uint64, plaintext []byte) (CredentialView, Secret, error) {
	var r credentialRecordIn
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return CredentialView{}, Secret{}, errors.New("credential record is not valid JSON of the expected shape")
	}
	secret, err := decodeSecretField(r.Secret)
	clear(r.Secret)
	if err != nil {
		return CredentialView{}, Secret{}, err
	}
	r.Secret = nil
	c, err := NewCredential{
		Name: r.Name, Secret: Secret{b: secret}, Injection: r.Injection,
		Hosts: r.Hosts, PathPrefixes: r.PathPrefixes, Approval: r.Approval, RotateEveryDays: r.RotateEveryDays,
	}.validate()
	if err != nil {
		clear(secret)
		return CredentialView{}, Secret{}, err
	}
	view := CredentialView{
		ID: id, Name: c.Name, Injection: c.Injection, Hosts: c.Hosts,
		PathPrefixes: c.PathPrefixes, Approval: c.Approval,
		CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt, SecretSetAt: r.CreatedAt, Version: version,
	}
	if r.UpdatedAt != nil {
		view.UpdatedAt = *r.UpdatedAt
	}
	if r.SecretSetAt != nil {
		view.SecretSetAt = *r.SecretSetAt
	}
	view.RotateEveryDays = c.RotateEveryDays
	view.RotationDueAt = rotationDueAt(view.SecretSetAt, c.RotateEveryDays)
	return view, c.Secret, nil
}

func encodeCredential(c NewCredential, at credentialTimes) []byte {
	updated, secretSet := at.updated.UTC(), at.secretSet.UTC()
	b, err := json.Marshal(credentialRecord{
		Name: c.Name, Secret: c.Secret.b, Injection: c.Injection, Hosts: c.Hosts,
		PathPrefixes: c.PathPrefixes, Approval: c.Approval, CreatedAt: at.created.UTC(),
		UpdatedAt: &updated, SecretSetAt: &secretSet, RotateEveryDays: c.RotateEveryDays,
	})
	if err != nil {
		panic("vault: " + err.Error())
	}
	return b
}

// settingsRecord is the plaintext sealed in the "settings" record.
type settingsRecord struct {
	AutoLockAfter time.Duration `json:"auto_lock_after_ns"`
	// Controls is the composition root's sealed controls (ControlsBlob),
	// absent until first set.
	Controls json.RawMessage `json:"controls,omitempty"`
	// The last backup exported and the backup reminder's interval
	// (reminders.go), absent until the first of each.
	LastBackupAt       *time.Time `json:"last_backup_at,omitempty"`
	LastBackupPath     string     `json:"last_backup_path,omitempty"`
	BackupReminderDays *int       `json:"backup_reminder_days,omitempty"`
}

// maxControls bounds the controls blob.
const maxControls = 256 << 10

// maxBackupPath bounds the recorded path of the last backup.
const maxBackupPath = 4096

func decodeSettings(plaintext []byte) (settingsRecord, error) {
	var s settingsRecord
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return settingsRecord{}, errors.New("settings record is not valid JSON of the expected shape")
	}
	if err := checkAutoLock(s.AutoLockAfter); err != nil {
		return settingsRecord{}, err
	}
	if len(s.Controls) > maxControls {
		return settingsRecord{}, errors.New("settings record's controls are too large")
	}
	if d := s.BackupReminderDays; d != nil && checkBackupReminder(*d) != nil {
		return settingsRecord{}, errors.New("settings record's backup reminder is out of range")
	}
	if len(s.LastBackupPath) > maxBackupPath {
		return settingsRecord{}, errors.New("settings record's backup path is too long")
	}
	return s, nil
}

const (
	minAutoLock = time.Minute
	maxAutoLock = 7 * 24 * time.Hour
)

func checkAutoLock(d time.Duration) error {
	if d < minAutoLock || d > maxAutoLock {
		return fmt.Errorf("%w: auto-lock time must be between %v and %v", ErrInvalid, minAutoLock, maxAutoLock)
	}
	return nil
}
