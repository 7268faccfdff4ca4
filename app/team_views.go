package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/yettdev/yett/backend/team"
)

// The Team view's views: what a lead reads of the team database (rows,
// machines, checkpoints and requests, each signature already checked by
// backend/team) and this machine's membership. None holds a secret: the
// team database holds none, and the membership's password and signing key
// stay in the vault.

// TeamStatusView is this machine's place in a team and its sharing.
type TeamStatusView struct {
	// InTeam: the vault holds a team membership (false while it is locked).
	InTeam   bool   `json:"inTeam"`
	TeamName string `json:"teamName"`
	Role     string `json:"role" enum:"TeamRole"`
	// Machine is this machine's host name in the team.
	Machine string `json:"machine"`
	Member  string `json:"member"`
	// Sharing: this Yett's syncer runs (the vault is unlocked and this
	// process serves agents).
	Sharing   bool `json:"sharing"`
	Connected bool `json:"connected"`
	// LastSynced is when everything queued had reached the database ("":
	// never).
	LastSynced string `json:"lastSynced"`
	// Waiting counts the records queued and not yet sent.
	Waiting int `json:"waiting"`
	// Problem says why the database is not connected.
	Problem string `json:"problem"`
}

// TeamMachineView is one machine of the team.
type TeamMachineView struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	Member   string `json:"member"`
	Kind     string `json:"kind"`
	// LastSeen is the machine's last sync ("": never).
	LastSeen string `json:"lastSeen"`
	// Removed is when the lead removed it ("": a member still).
	Removed string `json:"removed"`
	// Clock says how far off the machine's clock was at its last sync,
	// when more than a minute ("" otherwise).
	Clock       string `json:"clock"`
	Rows        int    `json:"rows"`
	Fingerprint string `json:"fingerprint"`
}

// TeamRowView is one inventory row of one machine.
type TeamRowView struct {
	Machine  string `json:"machine"`
	Hostname string `json:"hostname"`
	Member   string `json:"member"`
	// Removed: the machine was removed from the team.
	Removed bool `json:"removed"`
	// Verified: the row carries its machine's signature.
	Verified bool             `json:"verified"`
	Updated  string           `json:"updated"`
	Row      InventoryRowView `json:"row"`
}

// TeamRowsPage is one page of the team's rows; Next is the cursor of the
// next page ("" after the last).
type TeamRowsPage struct {
	Rows []TeamRowView `json:"rows"`
	Next string        `json:"next"`
}

// TeamFilter narrows the team's rows as the Inventory's filter does, and
// to one machine (its id or host name, "" for all).
type TeamFilter struct {
	Text    string `json:"text"`
	State   string `json:"state" enum:"InventoryStateFilter"`
	Machine string `json:"machine"`
}

// TeamCheckpointView is a machine's newest published audit checkpoint,
// the newest size a witness cosigned, and the newest refusal a witness
// made of its log.
type TeamCheckpointView struct {
	Machine   string `json:"machine"`
	Hostname  string `json:"hostname"`
	Size      int64  `json:"size"`
	Published string `json:"published"`
	// Verified: the checkpoint carries its machine's signature.
	Verified     bool   `json:"verified"`
	CosignedSize int64  `json:"cosignedSize"`
	Witness      string `json:"witness"`
	// Witnessed: a witness cosigned the newest checkpoint.
	Witnessed bool `json:"witnessed"`
	// Refused: a witness refused a checkpoint of this log, the machine
	// recorded it and published it; Refusal says why: rollback (the log
	// was cut back) or fork (it was rewritten).
	Refused   bool   `json:"refused"`
	Refusal   string `json:"refusal" enum:"TeamRefusal"`
	RefusedAt string `json:"refusedAt"`
	// Words say it all for a person.
	Words string `json:"words"`
}

// TeamRequestView is a revocation request and its outcome.
type TeamRequestView struct {
	ID          string `json:"id"`
	Hostname    string `json:"hostname"`
	Member      string `json:"member"`
	RowID       string `json:"rowId"`
	RowName     string `json:"rowName"`
	Reason      string `json:"reason"`
	RequestedBy string `json:"requestedBy"`
	RequestedAt string `json:"requestedAt"`
	Status      string `json:"status" enum:"TeamRequestStatus"`
	// Outcome is the machine's answer in words ("" while pending).
	Outcome    string `json:"outcome"`
	AnsweredAt string `json:"answeredAt"`
	// Verified: the answer carries the machine's signature.
	Verified bool `json:"verified"`
	// Waiting says, while pending, where, since when and the backup
	// revoker.
	Waiting string `json:"waiting"`
}

// teamRoles and teamRequestStatuses are the closed sets of the views.
var (
	teamRoles           = []string{"", team.KindLead, team.KindMember}
	teamRefusals        = []string{"", "rollback", "fork"}
	teamRequestStatuses = []string{team.StatusPending, team.StatusDone, team.StatusIncomplete, team.StatusFailed, team.StatusRefused}
)

func teamStatusView(st team.Status, c *team.Credentials, sharing bool) TeamStatusView {
	return TeamStatusView{
		InTeam: true, TeamName: c.TeamName, Role: c.Kind, Machine: c.Hostname, Member: c.Member, Sharing: sharing,
		Connected: st.Connected, LastSynced: rfc3339(st.LastSynced), Waiting: st.Waiting, Problem: st.Problem,
	}
}

func teamMachineView(m team.Machine) TeamMachineView {
	v := TeamMachineView{ID: m.ID, Hostname: m.Hostname, Member: m.Member, Kind: m.Kind, Rows: m.Rows, Fingerprint: m.Fingerprint}
	if m.LastSync != nil {
		v.LastSeen = rfc3339(*m.LastSync)
	}
	if m.RemovedAt != nil {
		v.Removed = rfc3339(*m.RemovedAt)
	}
	if s := m.ClockSkewSeconds; s != nil && (*s > 60 || *s < -60) {
		d := (time.Duration(*s) * time.Second).Round(time.Minute)
		v.Clock = fmt.Sprintf("off by %s", d)
	}
	return v
}

func teamRowView(r team.TeamRow) TeamRowView {
	return TeamRowView{Machine: r.Machine, Hostname: r.Hostname, Member: r.Member, Removed: r.Removed, Verified: r.Verified,
		Updated: rfc3339(r.UpdatedAt), Row: inventoryRowView(r.Row)}
}

func teamCheckpointView(c team.CheckpointView) TeamCheckpointView {
	v := TeamCheckpointView{Machine: c.Machine, Hostname: c.Hostname, Size: c.Size, Published: rfc3339(c.PublishedAt),
		Verified: c.Verified, CosignedSize: c.CosignedSize, Witness: c.Witness, Witnessed: c.CosignedSize >= c.Size && c.CosignedSize > 0,
		Refused: c.Refused != "", Refusal: c.Refused, RefusedAt: rfc3339(c.RefusedAt)}
	var words []string
	if !c.Verified {
		words = append(words, fmt.Sprintf("The checkpoint at %d records does not carry %s's signature.", c.Size, c.Hostname))
	}
	switch c.Refused {
	case "rollback":
		words = append(words, fmt.Sprintf("Refused by %s: %s's log was cut back (a checkpoint at %d records, where the witness had cosigned %d).",
			c.RefusedBy, c.Hostname, c.RefusedSize, c.RefusedWitnessSize))
	case "fork":
		words = append(words, fmt.Sprintf("Refused by %s: %s's log was rewritten (its checkpoint at %d records does not extend the %d the witness had cosigned).",
			c.RefusedBy, c.Hostname, c.RefusedSize, c.RefusedWitnessSize))
	case "":
	default:
		words = append(words, fmt.Sprintf("Refused by %s (%s).", c.RefusedBy, c.Refused))
	}
	if v.Refused && !c.RefusalVerified {
		words = append(words, "The refusal does not carry the machine's signature.")
	}
	switch {
	case v.Witnessed:
		words = append(words, fmt.Sprintf("Its newest checkpoint, %d records, is witnessed by %s.", c.Size, c.Witness))
	case c.CosignedSize == 0:
		words = append(words, fmt.Sprintf("No witness has cosigned %s's log (newest checkpoint at %d records).", c.Hostname, c.Size))
	default:
		words = append(words, fmt.Sprintf("Not yet witnessed at %d records: the witness cosigned up to %d.", c.Size, c.CosignedSize))
	}
	v.Words = strings.Join(words, " ")
	return v
}

func teamRequestView(r team.RequestView) TeamRequestView {
	v := TeamRequestView{ID: r.UID, Hostname: r.Hostname, Member: r.Member, RowID: r.RowID, RowName: r.RowName, Reason: r.Reason,
		RequestedBy: r.RequestedBy, RequestedAt: rfc3339(r.RequestedAt), Status: r.Status, Verified: r.Verified, Waiting: r.Waiting}
	if r.AnsweredAt != nil {
		v.AnsweredAt = rfc3339(*r.AnsweredAt)
	}
	if r.Outcome != nil {
		v.Outcome = r.Outcome.Words
	}
	return v
}
