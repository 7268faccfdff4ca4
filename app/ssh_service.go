package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/action/sshaction"
	"github.com/yettdev/yett/backend/sshhosts"
	"github.com/yettdev/yett/backend/vault"
)

// EventSSHChanged has no payload: a host was added, edited, pinned or
// removed, or presented a host key that is not pinned; the UI re-reads the
// list.
const EventSSHChanged = "ssh:changed"

// errNoSSH is what the UI is told when the hosts service could not start.
var errNoSSH = shown("SSH hosts are unavailable: Yett could not make its recordings folder. Details are in the Yett log.")

// SSHService is bound to the UI as window.go.app.SSHService: the
// desktop's side of SSH hosts (backend/sshhosts, run by the keeper). Views
// carry a host's public key and fingerprints, never its private key; the
// one secret coming in is the private key being imported, with its
// passphrase, which are wiped once read.
type SSHService struct {
	m      *sshhosts.Registry
	events *eventSink
	log    *slog.Logger
	cancel func()
	// probeTimeout bounds trust on first use.
	probeTimeout time.Duration
	// inventory is the owner inventory, whose verdict on whether a host
	// is under control the Hosts view shows (the gateway enforces it).
	inventory *InventoryService
}

func newSSHService(m *sshhosts.Registry, v *vault.Vault, events *eventSink, log *slog.Logger) *SSHService {
	s := &SSHService{m: m, events: events, log: log, probeTimeout: 30 * time.Second}
	s.cancel = v.Subscribe(func(e vault.Event) {
		if strings.HasPrefix(string(e.Change), "ssh_host") {
			s.events.send(EventSSHChanged, nil)
		}
	})
	return s
}

func (s *SSHService) close() {
	if s != nil && s.cancel != nil {
		s.cancel()
	}
}

func (s *SSHService) manager() (*sshhosts.Registry, error) {
	if s.m == nil {
		return nil, errNoSSH
	}
	return s.m, nil
}

// Hosts lists every host, by name.
func (s *SSHService) Hosts() ([]SSHHostView, error) {
	m, err := s.manager()
	if err != nil {
		return nil, err
	}
	hs, err := m.Hosts()
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]SSHHostView, 0, len(hs))
	for _, h := range hs {
		out = append(out, sshHostView(h))
	}
	s.overlayInventory(out)
	return out, nil
}

// overlayInventory lays the owner inventory's verdict over each host:
// whether it is under control and what it misses (it needs an environment
// and a review date too, not only the owner and backup revoker the host
// record holds): the inventory alone decides it. The host's own problems
// (its host key, its rules) stay. A host with no row yet reads as not
// under control.
func (s *SSHService) overlayInventory(views []SSHHostView) {
	if len(views) == 0 {
		return
	}
	byID := s.inventory.rowsByID(s.log, "Hosts")
	for i := range views {
		r, ok := byID[views[i].ID]
		if !ok {
			continue
		}
		v := &views[i]
		v.Controlled = r.Controlled
		v.Problems = append(v.Problems, inventoryProblems(r)...)
	}
}

// AddHost adds a host. With form.PrivateKey empty Yett makes an Ed25519
// key; otherwise it imports the key (opened with form.Passphrase when it
// is protected). The view carries the public key to copy into the host's
// authorized_keys; the private key is never shown again.
func (s *SSHService) AddHost(form SSHHostForm) (SSHHostView, error) {
	key, pass := []byte(form.PrivateKey), []byte(form.Passphrase)
	form.PrivateKey, form.Passphrase = "", ""
	defer wipe(key)
	defer wipe(pass)
	m, err := s.manager()
	if err != nil {
		return SSHHostView{}, err
	}
	h, err := m.Add(sshhosts.NewHost{Name: form.Name, Address: form.Address, Port: form.Port, User: form.User,
		PrivateKey: key, Passphrase: pass, Settings: form.Settings.toSettings()})
	if err != nil {
		return SSHHostView{}, s.publicError(err)
	}
	v := sshHostView(h)
	if err := s.inventory.declare(h.ID, h.Name, "", "", form.Environment); err != nil {
		return v, err
	}
	// The inventory's verdict, now that it knows the environment.
	vs := []SSHHostView{v}
	s.overlayInventory(vs)
	return vs[0], nil
}

// UpdateHost replaces a host's settings.
func (s *SSHService) UpdateHost(id string, settings SSHSettingsForm) (SSHHostView, error) {
	return s.hostOp(func(m *sshhosts.Registry) (sshhosts.HostView, error) { return m.Update(id, settings.toSettings()) })
}

// RemoveHost deletes a host and its key (its recordings stay).
func (s *SSHService) RemoveHost(id string) error {
	m, err := s.manager()
	if err != nil {
		return err
	}
	return s.publicError(m.Remove(id))
}

// PinPasted pins the host keys pasted (known_hosts lines, ssh-keyscan
// output or public keys), replacing the host's pins.
func (s *SSHService) PinPasted(id, text string) (SSHHostView, error) {
	return s.hostOp(func(m *sshhosts.Registry) (sshhosts.HostView, error) { return m.PinPasted(id, text) })
}

// PinFromKnownHosts pins the keys ~/.ssh/known_hosts holds for the host.
func (s *SSHService) PinFromKnownHosts(id string) (SSHPinResult, error) {
	m, err := s.manager()
	if err != nil {
		return SSHPinResult{}, err
	}
	h, skipped, err := m.PinFromKnownHosts(id)
	if err != nil {
		return SSHPinResult{}, s.publicError(err)
	}
	return SSHPinResult{Host: sshHostView(h), Skipped: skipped}, nil
}

// TrustOnFirstUse connects to a host without pins, authenticates with its
// key and pins the host key it presented only once the host accepted
// Yett's key. It runs nothing on the host.
func (s *SSHService) TrustOnFirstUse(id string) (SSHHostView, error) {
	return s.hostOp(func(m *sshhosts.Registry) (sshhosts.HostView, error) {
		ctx, cancel := context.WithTimeout(context.Background(), s.probeTimeout)
		defer cancel()
		return m.TrustOnFirstUse(ctx, id)
	})
}

// AcceptPresented pins the key a host presented instead of its pin, once
// the person checked the change is genuine.
func (s *SSHService) AcceptPresented(id string) (SSHHostView, error) {
	return s.hostOp(func(m *sshhosts.Registry) (sshhosts.HostView, error) { return m.AcceptPresented(id) })
}

// Recordings lists a host's session recordings, newest first.
func (s *SSHService) Recordings(hostID string) ([]SSHRecordingView, error) {
	m, err := s.manager()
	if err != nil {
		return nil, err
	}
	list, err := m.Recordings(hostID)
	if err != nil {
		return nil, s.publicError(err)
	}
	out := make([]SSHRecordingView, 0, len(list))
	for _, r := range list {
		out = append(out, recordingView(r))
	}
	return out, nil
}

// Recording reads one recording back (asciicast v2 text), while the vault
// is unlocked.
func (s *SSHService) Recording(id string) (SSHRecordingText, error) {
	m, err := s.manager()
	if err != nil {
		return SSHRecordingText{}, err
	}
	r, err := m.Recording(id)
	if err != nil {
		return SSHRecordingText{}, s.publicError(err)
	}
	return SSHRecordingText{SSHRecordingView: recordingView(r.RecordingView), Cast: string(r.Cast), Complete: r.Complete}, nil
}

func (s *SSHService) hostOp(op func(m *sshhosts.Registry) (sshhosts.HostView, error)) (SSHHostView, error) {
	m, err := s.manager()
	if err != nil {
		return SSHHostView{}, err
	}
	h, err := op(m)
	if err != nil {
		return SSHHostView{}, s.publicError(err)
	}
	return sshHostView(h), nil
}

// sshTexts: documented errors whose texts are written for a person and
// never quote a key, a passphrase or what was pasted.
var sshTexts = []known{
	{vault.ErrCredentialChanged, "This host changed since the page was read (another window or yett serve changed it). Nothing was pinned; try again."},
	{context.DeadlineExceeded, "The host did not answer in time; nothing was pinned."},
	{err: sshhosts.ErrInvalid}, {err: sshhosts.ErrAlreadyPinned}, {err: sshhosts.ErrNoAlert},
	{err: sshhosts.ErrChanged}, {err: sshhosts.ErrNoRecording}, {err: sshhosts.ErrRecordingDamaged},
	{err: sshaction.ErrNotAKey}, {err: sshaction.ErrPassphraseNeeded}, {err: sshaction.ErrWrongPassphrase},
	{err: sshaction.ErrUnsupportedKey}, {err: sshaction.ErrKeyTooLarge}, {err: sshaction.ErrKDFTooSlow},
	{err: sshaction.ErrUnreachable}, {err: sshaction.ErrHandshake}, {err: sshaction.ErrAuth},
	{err: sshaction.ErrHostKeyChanged}, {err: vault.ErrLocked}, {err: vault.ErrNotInitialised},
	{err: vault.ErrInvalid}, {err: vault.ErrNoSSHHost}, {err: vault.ErrSSHHostExists},
}

// publicError chooses the text the UI shows for err: the documented
// errors' own first sentence without their package prefix; anything else
// is logged and said generically.
func (s *SSHService) publicError(err error) error {
	return publicError(s.log, "SSH host operation", err, sshTexts)
}
