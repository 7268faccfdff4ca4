package team

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yettdev/yett/backend/vault"
)

// Invitation is what a one-time invitation code carries: everything a
// machine needs to join, and the founding lead key's fingerprint, so the
// machine can tell it joined the team the lead meant and not a database
// that merely answers.
type Invitation struct {
	TeamID   string
	Database Database
	// Role is the login role made for the invitee; Password its password
	// until the machine joins and sets one only its vault knows.
	Role     string
	Password vault.Secret
	ID       string
	// LeadKey is the founding lead key's fingerprint.
	LeadKey   string
	Member    string
	Kind      string
	ExpiresAt time.Time
}

// Member kinds.
const (
	KindMember = "member"
	KindLead   = "lead"
)

// codePrefix starts every invitation code; the version follows it.
const codePrefix = "yett-team-1-"

// maxCode bounds an invitation code (a real one is about 400 characters).
const maxCode = 4096

// codeWire is the code's payload. The password is bytes (base64 in the
// JSON), so the decoded copy can be wiped.
type codeWire struct {
	Team     string `json:"t"`
	Host     string `json:"h"`
	Port     int    `json:"p"`
	Name     string `json:"d"`
	SSLMode  string `json:"s"`
	Role     string `json:"r"`
	Password []byte `json:"pw"`
	ID       string `json:"i"`
	LeadKey  string `json:"k"`
	Member   string `json:"m"`
	Kind     string `json:"kind"`
	Expires  int64  `json:"e"`
}

var (
	invitationIDPattern = regexp.MustCompile(`^inv-[0-9a-f]{16}$`)
	fingerprintPattern  = regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43}$`)
)

// Code is the invitation as the text the lead hands over. It is a
// credential (it logs in to the team database until it is used), so it is
// a vault.Secret: it prints as REDACTED and the caller wipes it.
func (inv *Invitation) Code() vault.Secret {
	w := codeWire{Team: inv.TeamID, Host: inv.Database.Host, Port: inv.Database.Port, Name: inv.Database.Name,
		SSLMode: inv.Database.SSLMode, Role: inv.Role, Password: inv.Password.Bytes(), ID: inv.ID, LeadKey: inv.LeadKey,
		Member: inv.Member, Kind: inv.Kind, Expires: inv.ExpiresAt.Unix()}
	payload, _ := json.Marshal(w)
	sum := sha256.Sum256(payload)
	raw := append(payload, sum[:4]...)
	out := make([]byte, len(codePrefix)+base64.RawURLEncoding.EncodedLen(len(raw)))
	copy(out, codePrefix)
	base64.RawURLEncoding.Encode(out[len(codePrefix):], raw)
	clear(payload)
	s := vault.NewSecret(out)
	clear(out)
	return s
}

// ParseCode reads an invitation code (surrounding white space, and line
// breaks a mail program added, are ignored). Every failure is ErrBadCode
// with words of its own: the text is a credential and is never quoted.
func ParseCode(code []byte) (Invitation, error) {
	bad := func(why string) (Invitation, error) { return Invitation{}, fmt.Errorf("%w: %s", ErrBadCode, why) }
	if len(code) > maxCode {
		return bad("it is longer than any invitation code")
	}
	text := bytes.Join(bytes.Fields(code), nil)
	rest, ok := bytes.CutPrefix(text, []byte(codePrefix))
	if !ok {
		return bad("an invitation code starts with " + codePrefix)
	}
	raw := make([]byte, base64.RawURLEncoding.DecodedLen(len(rest)))
	n, err := base64.RawURLEncoding.Strict().Decode(raw, rest)
	defer clear(raw)
	if err != nil || n < 5 {
		return bad("it is damaged (copy it again, whole)")
	}
	payload, check := raw[:n-4], raw[n-4:n]
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:4], check) {
		return bad("it is damaged (copy it again, whole)")
	}
	var w codeWire
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || dec.More() {
		clear(w.Password)
		return bad("its contents do not read")
	}
	defer clear(w.Password)
	inv := Invitation{TeamID: w.Team, Database: Database{Host: w.Host, Port: w.Port, Name: w.Name, SSLMode: w.SSLMode},
		Role: w.Role, ID: w.ID, LeadKey: w.LeadKey, Member: w.Member, Kind: w.Kind, ExpiresAt: time.Unix(w.Expires, 0).UTC()}
	if why := inv.problem(len(w.Password)); why != "" {
		return bad(why)
	}
	inv.Password = vault.NewSecret(w.Password)
	return inv, nil
}

// problem names what is wrong with a decoded invitation, "" when nothing.
func (inv *Invitation) problem(passwordLen int) string {
	switch {
	case !teamIDPattern.MatchString(inv.TeamID):
		return "it names no team"
	case inv.Database.check() != nil:
		return "its database address is not one Yett connects to: " + strings.TrimPrefix(inv.Database.check().Error(), ErrInvalid.Error()+": ")
	case !machinePattern.MatchString(inv.Role) || !strings.HasPrefix(inv.Role, "yett_"+inv.TeamID+"_m"):
		return "it names no role of the team"
	case passwordLen < 20 || passwordLen > 200:
		return "it carries no password"
	case !invitationIDPattern.MatchString(inv.ID):
		return "it names no invitation"
	case !fingerprintPattern.MatchString(inv.LeadKey):
		return "it carries no lead key fingerprint"
	case checkMember(inv.Member) != nil:
		return "it names no member"
	case inv.Kind != KindMember && inv.Kind != KindLead:
		return "it names no kind of member"
	case inv.ExpiresAt.Unix() <= 0:
		return "it has no expiry"
	}
	return ""
}

// checkMember: a member is named by a person, as the inventory's owners
// are: one printable line of at most 200 characters.
func checkMember(m string) error {
	if m == "" || utf8.RuneCountInString(m) > 200 || !utf8.ValidString(m) || strings.ContainsAny(m, "\x00\r\n\t") {
		return fmt.Errorf("%w: a member is named by 1-200 printable characters on one line", ErrInvalid)
	}
	for _, r := range m {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: a member is named by 1-200 printable characters on one line", ErrInvalid)
		}
	}
	return nil
}
