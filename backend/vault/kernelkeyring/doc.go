// Package kernelkeyring gives the vault the Linux kernel keyring (keyctl)
// as its OS keyring, for the yett CLI, which must not link
// github.com/99designs/keyring: that library connects to the D-Bus session
// bus from its package init, and `yett mcp`, which every agent starts, is
// the same binary.
//
// The layout is the one the app's keyctl backend uses (oskeyring with
// ServiceName "yett" and scope "user"): a keyring named "yett" in the
// user's keyring, one "user" key per vault. So a vault set up with
// `yett init --keyring` unlocks without its passphrase from the CLI, and
// from the app wherever the app falls back to the kernel keyring.
//
// What it protects against is the keyctl backend's: the key lives in the
// kernel, readable by the same user's processes that possess the user
// keyring, and is lost at reboot (the vault then says so and asks for the
// passphrase). On other systems Open says it is not available.
package kernelkeyring

// ServiceName is the named keyring inside the user keyring, as the app's.
const ServiceName = "yett"

// Keyring opens the kernel keyring; Name is ServiceName unless a test sets
// another.
type Keyring struct{ Name string }

// Default is the keyring the CLI uses.
func Default() Keyring { return Keyring{Name: ServiceName} }
