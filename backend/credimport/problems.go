package credimport

import "fmt"

// Why an entry cannot become a credential. Every problem is one of these
// fixed texts (only setAgain carries a line number), so none can quote the
// input.
const (
	problemEmpty     = "the value is empty"
	problemTooLong   = "the value is longer than 16 KiB, more than Yett keeps for one secret"
	problemLineBreak = "the value holds a line break, which cannot go into an HTTP header"
	problemNUL       = "the value holds a NUL byte, which cannot go into an HTTP header"
	problemMultiLine = "the value spans several lines (a key file?), which cannot go into an HTTP header"
	problemNotKeyVal = "the line is not KEY=value"
	problemBadKey    = "the name before = is not a variable name"
	problemUnclosed  = "a quote opens here and is never closed"
	problemAfter     = "text follows the closing quote"
	problemReference = "the value refers to another variable (${…}), which Yett does not expand"

	problemNoPassword  = "the item has no password"
	problemNote        = "a secure note: Yett imports a login's password and custom fields; copy a note's secret into Add credential"
	problemCard        = "a payment card, not a credential for an HTTP service"
	problemIdentity    = "an identity, not a credential for an HTTP service"
	problemSSHKey      = "an SSH key: add it under SSH hosts"
	problemOtherItem   = "an item of a kind Yett does not import"
	problemFieldSplits = "this field's value seems to span several lines, so the export cuts it"
)

// problemSetAgain: dotenv, like a shell, reads the last of two lines that
// set a name.
func problemSetAgain(line int) string {
	return fmt.Sprintf("set again on line %d, the value programs read", line)
}

// Problems lists every fixed problem text, for tests that check nothing
// else ever reaches Problem.
var Problems = []string{
	problemEmpty, problemTooLong, problemLineBreak, problemNUL, problemMultiLine, problemNotKeyVal,
	problemBadKey, problemUnclosed, problemAfter, problemReference, problemNoPassword, problemNote,
	problemCard, problemIdentity, problemSSHKey, problemOtherItem, problemFieldSplits,
}
