package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/yettdev/yett/backend/audit"
	"github.com/yettdev/yett/backend/witness"
)

// auditTestIdentity is a throwaway age identity for these scripts only.
const auditTestIdentity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"

// TestAuditScripts runs testdata/audit/*.txtar. `yett` runs Run in-process
// and, like testscript's exec, reports a non-zero exit as "[exit status N]"
// on stderr so scripts can pin the exit code. Helpers: `appendevents N`
// appends N events to $YETT_DATA_DIR/audit through the real writer (it holds
// only the public recipient), `flip FILE OFFSET` flips the low bit of one
// byte (a negative OFFSET counts from the end), `truncate FILE SIZE`,
// `appendhex FILE HEX` (raw bytes at the end), `agekeygen FILE`, `cosign
// FILE` (a real witness on loopback cosigns the log's checkpoint: FILE gets
// the cosigned checkpoint, $WITNESS_KEY the witness's verifier key and
// $OTHER_WITNESS_KEY another witness's).
func TestAuditScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/audit",
		Setup: func(e *testscript.Env) error {
			e.Setenv("YETT_DATA_DIR", filepath.Join(e.WorkDir, "data"))
			return os.WriteFile(filepath.Join(e.WorkDir, "identity.txt"), []byte(auditTestIdentity+"\n"), 0o600)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"yett":         cmdYett,
			"appendevents": cmdAppendEvents,
			"flip":         cmdFlip,
			"truncate":     cmdTruncate,
			"appendhex":    cmdAppendHex,
			"agekeygen":    cmdAgeKeygen,
			"cosign":       cmdCosign,
		},
	})
}

func cmdYett(ts *testscript.TestScript, neg bool, args []string) {
	env := &Env{Stdin: strings.NewReader(""), Stdout: ts.Stdout(), Stderr: ts.Stderr(), Getenv: ts.Getenv}
	// Relative paths in scripts are relative to the script's directory.
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"); ok && i+1 < len(args) && (v == "log" || v == "checkpoint" || v == "out" || v == "identity") {
			args[i+1] = ts.MkAbs(args[i+1])
		}
	}
	code := Run(context.Background(), env, args)
	if code != 0 {
		fmt.Fprintf(ts.Stderr(), "[exit status %d]\n", code)
	}
	if (code != 0) != neg {
		ts.Fatalf("yett %s: exit %d", strings.Join(args, " "), code)
	}
}

func cmdAppendEvents(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	id, err := age.ParseX25519Identity(auditTestIdentity)
	ts.Check(err)
	l, _, err := audit.Open(audit.Options{Dir: filepath.Join(ts.Getenv("YETT_DATA_DIR"), "audit"), Recipient: id.Recipient(), CheckpointEvery: 4})
	ts.Check(err)
	base := time.Date(2026, 7, 22, 14, 20, 11, 0, time.UTC)
	for i := range n {
		e := audit.Event{Type: audit.EventSessionApproved, Time: base.Add(time.Duration(i) * time.Second), SessionID: fmt.Sprintf("R%d", 31+i), BootID: "B8", VaultEpoch: 17}
		if i%2 == 1 {
			e = audit.Event{Type: audit.EventActionDenied, Time: e.Time, SessionID: e.SessionID, Reason: audit.ReasonGatewayRestarted,
				Action: &audit.Action{RequestID: "Q44", Channel: "http", Operation: "create_issue", Target: "api.example.com"}}
		}
		_, err := l.Append(context.Background(), e)
		ts.Check(err)
	}
	ts.Check(l.Close())
}

func cmdFlip(ts *testscript.TestScript, neg bool, args []string) {
	path := ts.MkAbs(args[0])
	b, err := os.ReadFile(path)
	ts.Check(err)
	off, err := strconv.Atoi(args[1])
	ts.Check(err)
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 1
	ts.Check(os.WriteFile(path, b, 0o600))
}

func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(os.Truncate(ts.MkAbs(args[0]), n))
}

func cmdAppendHex(ts *testscript.TestScript, neg bool, args []string) {
	b, err := hex.DecodeString(args[1])
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND, 0)
	ts.Check(err)
	_, err = f.Write(b)
	ts.Check(err)
	ts.Check(f.Close())
}

func cmdAgeKeygen(ts *testscript.TestScript, neg bool, args []string) {
	id, err := age.GenerateX25519Identity()
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(id.String()+"\n"), 0o600))
}

// Issue 18, item 11: yett audit show says where each approval came from,
// what was checked of it and whether the system verified the person.
func TestAuditShowSaysHowApprovalsCame(t *testing.T) {
	session := &audit.Event{Type: audit.EventSessionApproved, Via: &audit.Via{Surface: "notification",
		Detail: "server :1.42", Verified: "polkit: the password of ana"}}
	if got := tableDetail(session); got != "approved from a notification (server :1.42), verified: polkit: the password of ana" {
		t.Errorf("session approval: %q", got)
	}
	call := &audit.Event{Type: audit.EventActionRequested, Action: &audit.Action{Channel: "http", Operation: "POST", Target: "api.example.com"},
		Via: &audit.Via{Surface: "terminal", Detail: "/dev/pts/3, one-time code checked"}}
	if got := tableDetail(call); got != "http POST api.example.com; approved at yett serve's terminal (/dev/pts/3, one-time code checked), no system verification" {
		t.Errorf("call approved per call: %q", got)
	}
}

func cmdCosign(ts *testscript.TestScript, neg bool, args []string) {
	dir := filepath.Join(ts.Getenv("YETT_DATA_DIR"), "audit")
	vkey, err := audit.ReadVerifierKey(dir)
	ts.Check(err)
	key, err := witness.NewKey("witness.test/w1")
	ts.Check(err)
	other, err := witness.NewKey("witness.test/w2")
	ts.Check(err)
	logs, err := witness.NewKnownLogs(vkey)
	ts.Check(err)
	srv := httptest.NewServer(witness.New(key, logs, witness.NewMemStore(), nil))
	defer srv.Close()
	v, err := witness.NewVerifier(key.VerifierKey())
	ts.Check(err)
	s := &witness.Submitter{Dir: dir, StateDir: ts.MkAbs("witnessed"), Client: &witness.Client{URL: srv.URL, Witness: v, HTTP: srv.Client()}}
	out, err := s.Submit(context.Background())
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), out, 0o600))
	ts.Setenv("WITNESS_KEY", key.VerifierKey())
	ts.Setenv("OTHER_WITNESS_KEY", other.VerifierKey())
}
