package notify

import (
	"errors"
	"testing"
	"time"

	"github.com/yettdev/yett/backend/approval"
)

// A notification may answer what the person's policy lets it, and never
// an agent's request for access: that is answered in the window, where the
// person can add what it asks for. Any other surface answers all of them.
func TestNotificationsNeverAnswerAccess(t *testing.T) {
	open := Policy{SessionCards: true, CallCards: true, WindowOnly: []string{"cred_sensitive"}}
	policy := AnswerPolicy(func() Policy { return open })
	for _, tt := range []struct {
		r     approval.Request
		notif bool
	}{
		{approval.Request{Kind: approval.KindSession}, true},
		{approval.Request{Kind: approval.KindCall, Ref: "cred_1"}, true},
		{approval.Request{Kind: approval.KindCall, Ref: "cred_sensitive"}, false},
		{approval.Request{Kind: approval.KindAccess, Channel: "http", Target: "api.github.com"}, false},
	} {
		err := policy(tt.r, approval.SurfaceNotification)
		if (err == nil) != tt.notif || err != nil && !errors.Is(err, approval.ErrWindowOnly) {
			t.Errorf("%s %s from a notification: %v", tt.r.Kind, tt.r.Ref, err)
		}
		if err := policy(tt.r, approval.SurfaceApp); err != nil {
			t.Errorf("%s from the window: %v", tt.r.Kind, err)
		}
	}
	r := approval.Request{Kind: approval.KindAccess, Channel: "http", Target: "api.github.com", Who: approval.Requester{Name: "node"}}
	if n := Compose(r, open.Allows(r), time.Now()); n.Answerable || n.Title != "node asks for a credential for api.github.com" {
		t.Fatalf("an access card's notification: %+v", n)
	}
}
