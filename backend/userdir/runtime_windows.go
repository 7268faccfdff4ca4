package userdir

// userRuntimeDir: Windows has no per-user runtime directory; the gateway's
// pipe is named after the data directory's.
var userRuntimeDir = func() (string, bool) { return "", false }

func privateDir(string) (string, bool) { return "", false }
