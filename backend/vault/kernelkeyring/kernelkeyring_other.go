//go:build !linux

package kernelkeyring

import (
	"errors"

	"github.com/yettdev/yett/backend/vault"
)

// OpenKeyring: the kernel keyring is Linux's.
func (Keyring) OpenKeyring() (vault.KeyStore, error) {
	return nil, errors.New("the yett CLI keeps a keyring key only in the Linux kernel keyring; turn keyring unlock on in the app")
}
