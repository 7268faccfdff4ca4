package inventory

// Reminder kinds.
const (
	// ReminderReviewDue: a row's expiry review date has come.
	ReminderReviewDue = "review_due"
	// ReminderFullDrillDue: a row's scheduled full drill is due; it waits
	// for its owner to start it.
	ReminderFullDrillDue = "full_drill_due"
	// ReminderDrillFailed: a drill stopped at a failed step.
	ReminderDrillFailed = "drill_failed"
)

// Reminder is something the owner should know and do. It names the row,
// never a secret.
type Reminder struct {
	Kind  string `json:"kind"`
	RowID string `json:"row_id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Notifier raises reminders to the owner. The composition root wires it to
// the desktop's notifications and to what the app shows.
type Notifier interface {
	Remind(Reminder)
}
