package vault

import (
	"errors"
	"fmt"
	"time"
)

// Errors callers branch on. Messages are written for a person; none ever
// contains a passphrase, a secret or key material.
var (
	ErrAlreadyInitialised  = errors.New("vault: already set up")
	ErrNotInitialised      = errors.New("vault: not set up yet")
	ErrLocked              = errors.New("vault: locked")
	ErrWrongPassphrase     = errors.New("vault: wrong passphrase")
	ErrWeakPassphrase      = errors.New("vault: passphrase must be at least 12 characters")
	ErrDamaged             = errors.New("vault: the vault file is damaged")
	ErrKeyringUnavailable  = errors.New("vault: the OS keyring is not available; unlock with the passphrase")
	ErrKeyringNotEnabled   = errors.New("vault: keyring unlock is not turned on for this vault; unlock with the passphrase")
	ErrKeyringKeyMissing   = errors.New("vault: the vault's key is missing from the OS keyring (or was replaced); unlock with the passphrase, then turn keyring unlock on again")
	ErrInvalid             = errors.New("vault: invalid input")
	ErrNotFound            = errors.New("vault: no such credential")
	ErrNoCredential        = errors.New("vault: no credential is bound to this host and path")
	ErrAmbiguousCredential = errors.New("vault: more than one credential is bound equally specifically to this host and path")
	ErrClosed              = errors.New("vault: closed")
	ErrCredentialChanged   = errors.New("vault: the credential was edited or removed since it was chosen")
	// ErrEpochNotSaved: the vault locked (or lost its session) as asked,
	// but the new epoch could not be written to disk; it moved in memory.
	ErrEpochNotSaved = errors.New("vault: the vault locked, but its new epoch could not be saved to disk")
)

// ErrKeyringCancelled: the person stopped waiting for the OS keyring (which
// may still be showing its own dialog); nothing was changed.
var ErrKeyringCancelled = errors.New("vault: stopped waiting for the system keyring; nothing was changed")

// ThrottledError is returned by Unlock after repeated wrong passphrases:
// no attempt is made until RetryAfter has passed. The delay survives
// restarts because the failure count is stored.
type ThrottledError struct {
	RetryAfter time.Duration
	Failures   int
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("vault: %d wrong passphrases in a row; try again in %v", e.Failures, e.RetryAfter.Round(time.Second))
}

// DamagedError says what is damaged. errors.Is(err, ErrDamaged) holds.
type DamagedError struct {
	Where  string // "file", "header", "keyring wrap", "manifest", or "record <id> (<kind>)"
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("vault: the vault file is damaged: %s: %s. Nothing was changed; restore a backup or move the file away to start over", e.Where, e.Reason)
}

func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

func recordWhere(ref recordRef) string {
	return fmt.Sprintf("record %s (%s)", ref.ID, ref.Kind)
}
