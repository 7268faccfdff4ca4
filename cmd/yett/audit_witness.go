package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/yettdev/yett/backend/witness"
)

// witnessVerifiers parses the --witness-key flags of audit verify; they
// need a checkpoint to check. Usage problems exit 2.
func witnessVerifiers(keys []string, held string) ([]*witness.Verifier, error) {
	if len(keys) > 0 && held == "" {
		return nil, withExitCode(2, errors.New("audit verify: --witness-key checks the cosignatures of a --checkpoint FILE; give one"))
	}
	var out []*witness.Verifier
	for _, k := range keys {
		v, err := witness.NewVerifier(k)
		if err != nil {
			return nil, withExitCode(2, fmt.Errorf("audit verify: --witness-key %q is not a witness's verifier key (name+hash+key, type 0x04)", k))
		}
		out = append(out, v)
	}
	return out, nil
}

// heldCheckpoint is the log's own checkpoint inside a held checkpoint file:
// a cosigned one without its cosignatures, anything else as it is (Verify
// says what is wrong with it).
func heldCheckpoint(b []byte) []byte {
	if cp, err := witness.ParseCosigned(b); err == nil {
		return cp.Text
	}
	return b
}

// printCosignatures checks the cosignatures the held checkpoint file must
// carry and prints who cosigned when; without witness keys it says how many
// were not checked. An error is evidence: a cosignature missing or altered.
func printCosignatures(w io.Writer, file, logOnly []byte, witnesses []*witness.Verifier) error {
	if len(witnesses) == 0 {
		if extra := bytes.Count(file, []byte("\n— ")) - bytes.Count(logOnly, []byte("\n— ")); extra > 0 {
			fmt.Fprintf(w, "note: the checkpoint carries %d cosignature(s) that were not checked: give --witness-key for each witness you trust\n", extra)
		}
		return nil
	}
	cos, err := witness.VerifyCosignatures(file, witnesses)
	if err != nil {
		fmt.Fprintf(w, "COSIGNATURE: %v\n", err)
		return fmt.Errorf("the checkpoint's cosignatures do not verify (evidence of tampering, or a checkpoint that witness never cosigned): %w", err)
	}
	for _, c := range cos {
		fmt.Fprintf(w, "cosigned by %s at %s: the newest tree of this log that witness had seen, and consistent with every one it saw before\n", c.Witness, c.Time.Format(time.RFC3339))
	}
	return nil
}
