package team

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/pbkdf2"

	"github.com/yettdev/yett/backend/vault"
)

// roles are one team's PostgreSQL role names. Role names are global to a
// PostgreSQL cluster, so each carries the team's id: two teams may share a
// cluster (in two databases) without sharing a role.
type roles struct {
	team   string
	member string // group role of every machine (NOLOGIN)
	lead   string // group role of the leads' machines (NOLOGIN)
}

// teamIDPattern is a team's id: ten lowercase hex digits.
var teamIDPattern = regexp.MustCompile(`^[0-9a-f]{10}$`)

// machinePattern is a machine's id, which is its login role's name.
var machinePattern = regexp.MustCompile(`^yett_[0-9a-f]{10}_m[0-9a-f]{16}$`)

func rolesOf(teamID string) roles {
	return roles{team: teamID, member: "yett_" + teamID + "_member", lead: "yett_" + teamID + "_lead"}
}

// newMachineRole names a new machine's login role.
func (r roles) newMachineRole() string { return "yett_" + r.team + "_m" + randomHex(8) }

// requestChannel is the channel a machine LISTENs on for its revocation
// requests. It carries no payload: a notification only says "read the
// requests table".
func requestChannel(machine string) string {
	sum := sha256.Sum256([]byte(machine))
	return "yett_rq_" + hex.EncodeToString(sum[:8])
}

func newTeamID() string { return randomHex(5) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// ident quotes a role name for a statement that takes no parameters
// (CREATE ROLE, GRANT). Every name quoted here is one Yett made and
// checked (rolesOf, machinePattern), and quoting is a second guard.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// newPassword makes a role's password: 32 random bytes, as text.
func newPassword() vault.Secret {
	b := make([]byte, 32)
	rand.Read(b)
	out := make([]byte, base64.RawURLEncoding.EncodedLen(len(b)))
	base64.RawURLEncoding.Encode(out, b)
	clear(b)
	s := vault.NewSecret(out)
	clear(out)
	return s
}

// scramIterations is PostgreSQL's own default for SCRAM-SHA-256.
const scramIterations = 4096

// scramVerifier is what PostgreSQL stores for password (RFC 5802 and
// 7677, in PostgreSQL's text form). Yett sends the verifier, never the
// password: a statement can end up in the server's log
// (log_statement=ddl), and a verifier there opens nothing.
func scramVerifier(password *vault.Secret) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	salted := pbkdf2.Key(password.Bytes(), salt, scramIterations, 32, sha256.New)
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	clear(salted)
	clear(clientKey)
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(storedKey[:]), b64(serverKey))
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// literal quotes a string for a statement that takes no parameters
// (ALTER ROLE ... PASSWORD takes none). Only verifiers, which Yett made
// from base64 and digits, pass through it.
func literal(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
