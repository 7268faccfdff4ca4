package app

import (
	"github.com/yettdev/yett/backend/approval"
	"github.com/yettdev/yett/backend/inventory"
	"github.com/yettdev/yett/backend/keeper"
	"github.com/yettdev/yett/backend/oauth"
)

// keeping is the App's part that follows the composition root
// (backend/keeper): the keeper runs the audit writer, OAuth custody, the
// catalogue and the gateway; the app only hands what is running to the
// services the UI is bound to.
type keeping struct {
	broker *approval.Broker
	oauth  *oauth.Custody
	notes  notesSeen
	inv    *inventory.Inventory
	cancel func()
}

// notesSeen is what Settings shows of notifications: a change of it is
// pushed to the UI.
type notesSeen struct {
	available, actions bool
	server, problem    string
	trust              keeper.NotificationServer
}

// followKeeper attaches the running parts to the services now and after
// every change the keeper reports.
func (a *App) followKeeper() {
	a.keeping.cancel = a.keeper.Subscribe(a.attachParts)
	a.attachParts(a.keeper.State())
}

// attachParts hands a service a part only when it changed, so the UI is not
// told of a change for every audit state change.
func (a *App) attachParts(st keeper.State) {
	a.mu.Lock()
	k := &a.keeping
	broker := st.Broker != k.broker
	custody := st.OAuth != k.oauth
	seen := notesSeen{st.Notifications.Available, st.Notifications.Actions, st.Notifications.Server, st.Notifications.Problem, st.NotificationServer}
	notes := seen != k.notes
	inv := st.Inventory != k.inv
	k.broker, k.oauth, k.notes, k.inv = st.Broker, st.OAuth, seen, st.Inventory
	a.mu.Unlock()
	if notes {
		a.Desktop.push()
	}
	if broker {
		a.Approvals.attach(st.Broker)
	}
	if custody {
		a.OAuth.attach(st.OAuth, st.Operations)
	}
	if inv {
		a.Inventory.attach(st.Inventory)
	}
}
