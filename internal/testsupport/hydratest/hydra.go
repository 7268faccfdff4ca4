package hydratest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	defaultSubject = "alice@example.test"
	readyTimeout   = 60 * time.Second
	stopTimeout    = 5 * time.Second
	// Ports are picked by binding :0 and closing; another process can take
	// one before Hydra binds it, so Start tries again with fresh ports.
	startAttempts = 3
)

// Options configure one Hydra. The zero value is Hydra's defaults.
type Options struct {
	AccessTokenTTL  time.Duration // 0 => Hydra default (1h); env TTL_ACCESS_TOKEN
	RefreshTokenTTL time.Duration // 0 => Hydra default (720h); env TTL_REFRESH_TOKEN
	// Subject is the user the login handler logs in; "" => "alice@example.test".
	Subject string
	// RotationGracePeriod is how long a rotated refresh token still works
	// (Hydra allows at most 5m). 0 => Hydra's default of 0: presenting a
	// rotated refresh token again revokes the whole token family.
	// Env OAUTH2_GRANT_REFRESH_TOKEN_ROTATION_GRACE_PERIOD.
	RotationGracePeriod time.Duration
	// DynamicRegistration turns on dynamic client registration (RFC 7591)
	// at /oauth2/register; its metadata then lists registration_endpoint.
	DynamicRegistration bool
}

// Hydra is one running Ory Hydra with its login/consent server.
type Hydra struct {
	Issuer    string // the public base URL, e.g. http://127.0.0.1:PORT (URLS_SELF_ISSUER)
	PublicURL string
	AdminURL  string

	subject      string
	registration bool
	denyConsent  atomic.Bool
	admin        *http.Client
	logPath      string
}

// Start runs a fresh Hydra for t, with an empty database of its own, and
// stops it in t.Cleanup (SIGTERM, SIGKILL after 5 s). It fails t (through
// t.Fatalf, so call it from the test's goroutine) when Hydra cannot be built,
// migrated or made ready within 60 s, logging the path and last 40 lines of
// Hydra's log file. It takes about 0.4 s once the binary and the migrated
// schema are cached.
func Start(t testing.TB, opts Options) *Hydra {
	t.Helper()
	bin, err := binaryPath()
	if err != nil {
		t.Fatalf("hydratest: no Hydra binary: %v", err)
	}
	h := &Hydra{
		subject: opts.Subject,
		admin:   &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}},
	}
	if h.subject == "" {
		h.subject = defaultSubject
	}
	t.Cleanup(h.admin.CloseIdleConnections)

	login := httptest.NewServer(h.loginConsentHandler())
	t.Cleanup(login.Close)

	template, err := schemaTemplate(bin)
	if err != nil {
		t.Fatalf("hydratest: %v", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "hydra.sqlite")
	if err := copySchema(template, db); err != nil {
		t.Fatalf("hydratest: copying the migrated schema: %v", err)
	}
	base := []string{
		"DSN=" + sqliteDSN(db),
		"SECRETS_SYSTEM=" + randomHex(32),
		"URLS_LOGIN=" + login.URL + "/login",
		"URLS_CONSENT=" + login.URL + "/consent",
		// Explicit, so an inherited setting cannot put secrets in the log.
		"LOG_LEAK_SENSITIVE_VALUES=false",
	}
	for _, kv := range []struct {
		name string
		d    time.Duration
	}{
		{"TTL_ACCESS_TOKEN", opts.AccessTokenTTL},
		{"TTL_REFRESH_TOKEN", opts.RefreshTokenTTL},
		{"OAUTH2_GRANT_REFRESH_TOKEN_ROTATION_GRACE_PERIOD", opts.RotationGracePeriod},
	} {
		if kv.d < 0 {
			t.Fatalf("hydratest: %s must not be negative", kv.name)
		}
		if kv.d > 0 {
			base = append(base, kv.name+"="+hydraDuration(kv.d))
		}
	}

	if opts.DynamicRegistration {
		base = append(base, "OIDC_DYNAMIC_CLIENT_REGISTRATION_ENABLED=true")
		h.registration = true
	}
	for attempt := 1; ; attempt++ {
		h.logPath = filepath.Join(dir, fmt.Sprintf("hydra-%d.log", attempt))
		err := h.serve(t, bin, base)
		if err == nil {
			if err := h.seedIDTokenKey(); err != nil {
				failWithLog(t, "installing the ID token key: "+err.Error(), h.logPath, t.Fatalf)
			}
			return h
		}
		if !errors.Is(err, errPortTaken) || attempt == startAttempts {
			failWithLog(t, fmt.Sprintf("hydra serve (attempt %d of %d): %v", attempt, startAttempts, err), h.logPath, t.Fatalf)
		}
	}
}

var errPortTaken = errors.New("a port was taken before Hydra bound it")

// serve starts `hydra serve all` on two fresh ports and waits until both
// listeners report ready. On success t.Cleanup owns the process.
func (h *Hydra) serve(t testing.TB, bin string, base []string) error {
	public, admin := freePort(), freePort()
	if public == 0 || admin == 0 || public == admin {
		return errPortTaken
	}
	h.PublicURL = "http://127.0.0.1:" + strconv.Itoa(public)
	h.AdminURL = "http://127.0.0.1:" + strconv.Itoa(admin)
	h.Issuer = h.PublicURL
	env := append(baseEnv(), base...)
	env = append(env,
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+strconv.Itoa(public),
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+strconv.Itoa(admin),
		"URLS_SELF_ISSUER="+h.Issuer, "URLS_SELF_PUBLIC="+h.PublicURL, "URLS_SELF_ADMIN="+h.AdminURL,
	)
	if h.registration {
		// Hydra lists the endpoint in its metadata only when told where it is.
		env = append(env, "WEBFINGER_OIDC_DISCOVERY_CLIENT_REGISTRATION_URL="+h.PublicURL+"/oauth2/register")
	}
	logf, err := os.Create(h.logPath)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = dieWithParent()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	if err := h.waitReady(exited); err != nil {
		stop(cmd, exited)
		if log, _ := os.ReadFile(h.logPath); strings.Contains(string(log), "address already in use") {
			return errPortTaken
		}
		return err
	}
	t.Cleanup(func() {
		select {
		case <-exited:
			// Nothing here stops Hydra before cleanup: it crashed.
			failWithLog(t, "Hydra exited during the test", h.logPath, t.Errorf)
		default:
			stop(cmd, exited)
		}
	})
	return nil
}

func (h *Hydra) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for _, u := range []string{h.PublicURL + "/health/ready", h.AdminURL + "/health/ready"} {
		for {
			resp, err := h.admin.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case <-exited:
				return errors.New("Hydra exited before it was ready")
			case <-time.After(25 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not ready after %v", u, readyTimeout)
			}
		}
	}
	return nil
}

// stop asks Hydra to shut down and kills it if it has not after stopTimeout.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		cmd.Process.Kill()
		<-exited
	}
}

// runLogged runs one Hydra command to completion with its output in logPath.
func runLogged(bin string, env []string, logPath string, timeout time.Duration, args ...string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(baseEnv(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = dieWithParent()
	return cmd.Run()
}

// baseEnv passes on only what a process needs to run. Hydra reads every
// configuration key from the environment (DSN, LOG_LEVEL, URLS_...), so a
// developer's own Hydra settings must not leak into the tests' Hydra.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// failWithLog reports msg with the path and tail of a Hydra log through
// report (t.Fatalf or t.Errorf).
func failWithLog(t testing.TB, msg, logPath string, report func(string, ...any)) {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		report("hydratest: %s (log %s unreadable: %v)", msg, logPath, err)
		return
	}
	report("hydratest: %s\nlog %s, last 40 lines:\n%s", msg, logPath, lastLines(b, 40))
}

// hydraDuration formats d for Hydra's config schema, which accepts only
// integer units such as "90s" or "1h5m1s" (time.Duration.String gives "1.5s").
func hydraDuration(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	default:
		return strconv.FormatInt(d.Nanoseconds(), 10) + "ns"
	}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// LogPath is the file Hydra's stdout and stderr go to.
func (h *Hydra) LogPath() string { return h.logPath }
