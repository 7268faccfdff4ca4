package app

import (
	"testing"

	"github.com/yettdev/yett/backend/activity"
	"github.com/yettdev/yett/backend/audit"
)

// TestActivityItemNamesPathsAndChanges: the Activity view gets a call's
// path, and a vault change's kind (as its reason) and subject.
func TestActivityItemNamesPathsAndChanges(t *testing.T) {
	call := loggedActivityItem(activity.Item{Kind: activity.ItemCall, Type: audit.EventActionRequested,
		Call: &activity.Call{Channel: "http", Operation: "GET", Target: "api.github.com", Path: "/user", CredentialRef: "cred_1"}})
	if call.Path != "/user" || call.CredentialRef != "cred_1" {
		t.Errorf("the call's item: %+v", call)
	}
	change := loggedActivityItem(activity.Item{Kind: activity.ItemAuthority, Type: audit.EventVaultChanged,
		Detail: activity.Detail{Change: "secret_rotated", CredentialID: "cred_1", Subject: "github"}})
	if change.Reason != "secret_rotated" || change.CredentialRef != "cred_1" || change.CredentialName != "github" {
		t.Errorf("the vault change's item: %+v", change)
	}
}
