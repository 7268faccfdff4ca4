package kernelkeyring

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/yettdev/yett/backend/vault"
)

// OpenKeyring finds (or makes) the named keyring in the user keyring.
func (k Keyring) OpenKeyring() (vault.KeyStore, error) {
	user, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, true)
	if err != nil {
		return nil, fmt.Errorf("the kernel keyring is not available: %w", err)
	}
	ring, err := unix.KeyctlSearch(user, "keyring", k.Name, 0)
	if errors.Is(err, unix.ENOKEY) {
		ring, err = unix.AddKey("keyring", k.Name, nil, user)
	}
	if err != nil {
		return nil, fmt.Errorf("the kernel keyring is not available: %w", err)
	}
	return store{ring: ring}, nil
}

type store struct{ ring int }

func (s store) Get(name string) ([]byte, error) {
	id, err := unix.KeyctlSearch(s.ring, "user", name, 0)
	if errors.Is(err, unix.ENOKEY) || errors.Is(err, unix.EKEYEXPIRED) || errors.Is(err, unix.EKEYREVOKED) {
		return nil, vault.ErrKeyNotFound
	}
	if err != nil {
		return nil, err
	}
	// KEYCTL_READ answers the key's length whatever the buffer's size.
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, nil, 0)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	m, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil || m != n {
		clear(buf)
		return nil, errors.New("the kernel keyring item changed while it was read")
	}
	return buf, nil
}

func (s store) Set(name, _ string, secret []byte) error {
	_, err := unix.AddKey("user", name, secret, s.ring)
	return err
}

func (s store) Remove(name string) error {
	id, err := unix.KeyctlSearch(s.ring, "user", name, 0)
	if err != nil {
		return nil // nothing to remove
	}
	_, err = unix.KeyctlInt(unix.KEYCTL_UNLINK, id, s.ring, 0, 0)
	return err
}
