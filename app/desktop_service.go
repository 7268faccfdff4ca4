package app

import (
	"context"
	"errors"
	"os"
	"sort"
	"time"

	"github.com/yettdev/yett/backend/autostart"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/notify"
	"github.com/yettdev/yett/backend/operation"
	"github.com/yettdev/yett/backend/vault"
)

// EventDesktopChanged carries DesktopSettings when something Settings shows
// changed by itself (the notification server came or went).
const EventDesktopChanged = "desktop:changed"

// DesktopService is bound to the UI as window.go.app.DesktopService: Yett
// in the background (autostart, keeping running when the window closes,
// quitting) and notifications (whether they work and why not, and which
// cards they may answer). The policy is enforced by the broker, not here:
// this service only stores the person's choice.
type DesktopService struct{ a *App }

func newDesktopService(a *App) *DesktopService { return &DesktopService{a: a} }

// DesktopSettings is what the Settings page shows.
type DesktopSettings struct {
	// Autostart: "Start Yett when I log in" is on.
	Autostart          bool   `json:"autostart"`
	AutostartAvailable bool   `json:"autostartAvailable"`
	AutostartWhere     string `json:"autostartWhere"`
	AutostartProblem   string `json:"autostartProblem"`
	// Notifications says whether cards reach the person as notifications
	// with buttons, and why not.
	Notifications NotificationStatusView `json:"notifications"`
	Policy        NotificationPolicyView `json:"policy"`
	// Sensitive lists what can be marked sensitive: the credentials and
	// operations that ask for every call.
	Sensitive []SensitiveChoice `json:"sensitive"`
	// Verification is when Yett asks the system to confirm it is the
	// person before an approval takes effect.
	Verification VerificationView `json:"verification"`
	// NotificationServer says whether the server showing notifications
	// now is one the person trusts with Approve.
	NotificationServer NotificationServerView `json:"notificationServer"`
}

// NotificationServerView is the notification server for Settings.
type NotificationServerView struct {
	// Current describes the server that owns the name now: product, bus
	// name, pid and program ("" where there is none, or where the system
	// shows notifications itself).
	Current string `json:"current"`
	// Name is its bus name, what AcceptNotificationServer takes.
	Name string `json:"name"`
	// Trusted: its notifications carry Approve and Deny. Otherwise Why
	// says why not.
	Trusted bool   `json:"trusted"`
	Why     string `json:"why"`
}

// VerificationView is the sealed verification choice for Settings.
type VerificationView struct {
	// Mode is "every", "sensitive" or "never".
	Mode string `json:"mode" enum:"VerificationMode"`
	// Why says why the default on this desktop is what it is.
	Why string `json:"why"`
	// Available: the system can verify the person here now; Problem says
	// why not.
	Available bool   `json:"available"`
	Problem   string `json:"problem"`
	// Editable: the vault is unlocked (the choice is sealed in it).
	Editable bool `json:"editable"`
}

// NotificationStatusView is notify.Status for the UI.
type NotificationStatusView struct {
	Available bool   `json:"available"`
	Actions   bool   `json:"actions"`
	Server    string `json:"server"`
	Problem   string `json:"problem"`
}

// NotificationPolicyView is notify.Policy for the UI.
type NotificationPolicyView struct {
	SessionCards bool     `json:"sessionCards"`
	CallCards    bool     `json:"callCards"`
	WindowOnly   []string `json:"windowOnly"`
}

// SensitiveChoice is a credential or operation whose per-call cards can be
// kept to the window.
type SensitiveChoice struct {
	Ref  string `json:"ref"`
	Kind string `json:"kind" enum:"SensitiveKind"` // "credential" or "operation"
	Name string `json:"name"`
	// Detail is what it reaches, for the person ("api.example.com").
	Detail string `json:"detail"`
}

// entry is this user's autostart entry for this executable.
func (s *DesktopService) entry() (autostart.Entry, error) {
	exe, err := os.Executable()
	if err != nil {
		return autostart.Entry{}, shown("Yett could not find its own program to start at log in.")
	}
	return autostart.Entry{Exe: exe}, nil
}

// Settings reads what the Settings page shows.
func (s *DesktopService) Settings() DesktopSettings {
	var out DesktopSettings
	if e, err := s.entry(); err != nil {
		out.AutostartProblem = err.Error()
	} else {
		out.AutostartWhere = e.Location()
		on, err := e.Enabled()
		out.Autostart, out.AutostartAvailable = on, out.AutostartWhere != ""
		if err != nil {
			out.AutostartProblem = "Yett could not read its log-in entry."
			s.a.cfg.Log.Warn("reading the autostart entry", "err", err)
		}
	}
	k := s.a.keeper
	st := k.State()
	out.Notifications = NotificationStatusView{
		Available: st.Notifications.Available, Actions: st.Notifications.Actions,
		Server: st.Notifications.Server, Problem: st.Notifications.Problem,
	}
	p := k.NotificationPolicy()
	out.Policy = NotificationPolicyView{SessionCards: p.SessionCards, CallCards: p.CallCards, WindowOnly: p.WindowOnly}
	out.Sensitive = sensitiveChoices(s.a.vault, st.Operations)
	ns := k.NotificationServerState()
	out.NotificationServer = NotificationServerView{Current: ns.Current, Name: ns.Name, Trusted: ns.Trusted, Why: ns.Why}
	mode, why := k.Verification()
	ok, problem := k.CanVerify()
	out.Verification = VerificationView{Mode: mode, Why: why, Available: ok, Problem: problem,
		Editable: s.a.vault.Status().State == vault.StateUnlocked}
	return out
}

// sensitiveChoices lists the per-call credentials and operations.
func sensitiveChoices(v *vault.Vault, ops *operation.Catalogue) []SensitiveChoice {
	out := []SensitiveChoice{}
	if creds, err := v.Credentials().List(); err == nil {
		for _, c := range creds {
			if c.Approval != vault.ApprovalSession { // per_call, or writes: cards of their own
				detail := ""
				if len(c.Hosts) > 0 {
					detail = c.Hosts[0]
				}
				out = append(out, SensitiveChoice{Ref: c.ID, Kind: "credential", Name: c.Name, Detail: detail})
			}
		}
	}
	if ops != nil {
		for _, o := range ops.List() {
			if o.AsksEachCall() {
				out = append(out, SensitiveChoice{Ref: approvalOperationRef(o.Name), Kind: "operation", Name: o.Name, Detail: o.Method})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Kind < out[j].Kind || out[i].Kind == out[j].Kind && out[i].Name < out[j].Name
	})
	return out
}

// SetAutostart turns "Start Yett when I log in" on or off.
func (s *DesktopService) SetAutostart(on bool) (DesktopSettings, error) {
	e, err := s.entry()
	if err != nil {
		return s.Settings(), err
	}
	if on {
		err = e.Enable()
	} else {
		err = e.Disable()
	}
	if err != nil {
		s.a.cfg.Log.Warn("changing the autostart entry", "on", on, "err", err)
		if errors.Is(err, autostart.ErrUnsupported) {
			return s.Settings(), shown("Yett cannot start at log in on this system.")
		}
		return s.Settings(), shown("Yett could not change its log-in entry. Details are in the Yett log.")
	}
	return s.Settings(), nil
}

// SetNotificationPolicy stores which cards a notification may answer. The
// broker enforces it from the next answer on.
func (s *DesktopService) SetNotificationPolicy(p NotificationPolicyView) (DesktopSettings, error) {
	pol := notify.Policy{SessionCards: p.SessionCards, CallCards: p.CallCards, WindowOnly: append([]string{}, p.WindowOnly...)}
	if err := s.a.keeper.SetNotificationPolicy(pol); err != nil {
		return s.Settings(), s.controlError(err)
	}
	return s.Settings(), nil
}

// SetVerification chooses when Yett asks the system to confirm it is the
// person: "every" approval, "sensitive" (per-call cards) or "never". It is
// sealed in the vault and audited.
func (s *DesktopService) SetVerification(mode string) (DesktopSettings, error) {
	if err := s.a.keeper.SetVerification(mode); err != nil {
		return s.Settings(), s.controlError(err)
	}
	return s.Settings(), nil
}

// AcceptNotificationServer trusts the notification server Settings shows
// (by its bus name: if another took its place since, nothing is
// accepted). Where the system can confirm it is the person, it asks first.
func (s *DesktopService) AcceptNotificationServer(name string) (DesktopSettings, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.a.keeper.AcceptNotificationServer(ctx, name); err != nil {
		if errors.Is(err, keeper.ErrServerChanged) || errors.Is(err, keeper.ErrNotConfirmed) {
			return s.Settings(), err
		}
		return s.Settings(), s.controlError(err)
	}
	return s.Settings(), nil
}

// controlError is the person's words for a control that could not be
// saved.
func (s *DesktopService) controlError(err error) error {
	if errors.Is(err, vault.ErrLocked) {
		return shown("Unlock the vault to change this: it is kept sealed in the vault, where no other program can change it.")
	}
	s.a.cfg.Log.Warn("saving a control", "err", err)
	return shown("Yett could not save this choice. Details are in the Yett log.")
}

// KeepRunningInBackground is the person's answer to the first close: hide
// the window and keep serving agents.
func (s *DesktopService) KeepRunningInBackground() { s.a.keepInBackground() }

// Quit stops Yett: the vault locks, waiting agents are refused, the
// gateway stops.
func (s *DesktopService) Quit() { go s.a.quit() }

func (s *DesktopService) push() {
	if s != nil {
		s.a.events.send(EventDesktopChanged, s.Settings())
	}
}
