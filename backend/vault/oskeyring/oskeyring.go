// Package oskeyring gives the vault the operating system's keyring through
// github.com/99designs/keyring: macOS Keychain, Windows Credential Manager,
// Secret Service (GNOME Keyring, KWallet's bridge, KeePassXC), KWallet and
// the Linux kernel keyring (keyctl). Which backend is used is configuration
// only; the code is the same on every OS.
//
// # What each backend protects against
//
// macOS Keychain and Windows Credential Manager tie the item to the user's
// login (Keychain also to the app's code signature). A Linux Secret Service
// item is readable by any process running as the same user once the login
// keyring is unlocked, which is normally all the time. keyctl keeps the key
// in the kernel, readable by the same user's processes, and loses it at
// reboot. On Linux the passphrase is the strong option; the keyring is
// convenience.
//
// The file and pass backends are never used: the file backend is only as
// strong as a password it would prompt for (and derives its key with 8192
// PBKDF2 rounds), which would make it a second, weaker vault.
//
// # Linking this package
//
// 99designs/keyring connects to the D-Bus session bus from its package
// init. Without DBUS_SESSION_BUS_ADDRESS, and with dbus-launch installed,
// that would start a session bus that outlives the process; this package
// imports backend/busenv, whose init runs first and pins the address (see
// TestStartWithoutABusLeavesNoBus). Only the desktop app should import this
// package.
package oskeyring

import (
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/keyring"

	_ "github.com/yettdev/yett/backend/busenv" // before the keyring library's init
	"github.com/yettdev/yett/backend/vault"
)

// Keyring opens the first of Backends that works.
type Keyring struct {
	Backends    []keyring.BackendType
	ServiceName string
	// KeyCtlScope is the kernel keyring used by the keyctl backend: "user"
	// lives while any process of the user does; "session" ends with the
	// login session.
	KeyCtlScope string
}

// Default is the configuration the app uses.
func Default() Keyring {
	return Keyring{
		Backends: []keyring.BackendType{
			keyring.KeychainBackend, keyring.WinCredBackend, keyring.SecretServiceBackend,
			keyring.KWalletBackend, keyring.KeyCtlBackend,
		},
		ServiceName: "yett",
		KeyCtlScope: "user",
	}
}

// OpenKeyring tries each allowed backend that this OS supports, in order,
// and reports every backend's failure if none opens.
func (o Keyring) OpenKeyring() (vault.KeyStore, error) {
	supported := map[keyring.BackendType]bool{}
	for _, b := range keyring.AvailableBackends() {
		supported[b] = true
	}
	var reasons []string
	for _, b := range o.Backends {
		if b == keyring.FileBackend || b == keyring.PassBackend || !supported[b] {
			continue
		}
		kr, err := keyring.Open(keyring.Config{
			AllowedBackends:          []keyring.BackendType{b},
			ServiceName:              o.ServiceName,
			KeychainTrustApplication: true,
			KeyCtlScope:              o.KeyCtlScope,
			KWalletAppID:             o.ServiceName,
			KWalletFolder:            o.ServiceName,
			LibSecretCollectionName:  "login",
			WinCredPrefix:            o.ServiceName,
		})
		if err == nil {
			return store{kr}, nil
		}
		reasons = append(reasons, fmt.Sprintf("%s: %v", b, err))
	}
	if len(reasons) == 0 {
		return nil, errors.New("no supported keyring backend on this system")
	}
	return nil, errors.New(strings.Join(reasons, "; "))
}

type store struct{ kr keyring.Keyring }

func (s store) Get(name string) ([]byte, error) {
	item, err := s.kr.Get(name)
	if errors.Is(err, keyring.ErrKeyNotFound) {
		return nil, vault.ErrKeyNotFound
	}
	if err != nil {
		return nil, err
	}
	return item.Data, nil
}

func (s store) Set(name, label string, secret []byte) error {
	return s.kr.Set(keyring.Item{Key: name, Data: secret, Label: label, Description: label})
}

func (s store) Remove(name string) error {
	err := s.kr.Remove(name)
	if errors.Is(err, keyring.ErrKeyNotFound) {
		return nil
	}
	return err
}
