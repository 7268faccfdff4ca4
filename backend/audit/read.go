package audit

import (
	"bufio"
	"errors"
	"io"
	"iter"
	"os"

	"filippo.io/age"
)

// Entry is one decrypted event and its index in the log.
type Entry struct {
	Index int64
	Event Event
}

// ReadEvents decrypts the event records of the log at logPath with identity
// (the vault's audit identity), in order, skipping checkpoint records. A torn
// tail ends the sequence quietly; any other problem is yielded as an error
// and ends it. ReadEvents does not prove integrity: run Verify for that.
func ReadEvents(logPath string, identity age.Identity) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		f, err := os.Open(logPath)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		defer f.Close()
		rr := recordReader{r: bufio.NewReader(f)}
		for i := int64(0); ; i++ {
			rec, _, err := rr.next()
			if err == io.EOF || errors.Is(err, ErrTorn) {
				return
			}
			if err == nil && rec.Index != i {
				err = ErrWrongIndex
			}
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if rec.Kind != KindEvent {
				continue
			}
			ev, err := open(rec, identity)
			if !yield(Entry{Index: i, Event: ev}, err) || err != nil {
				return
			}
		}
	}
}
