package sshaction

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// CastHeader is the first line of an asciicast v2 recording
// (https://docs.asciinema.org/manual/asciicast/v2/), with Yett's facts of
// the call in the title and command.
type CastHeader struct {
	Version   int    `json:"version"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Timestamp int64  `json:"timestamp"`
	Command   string `json:"command,omitempty"`
	Title     string `json:"title,omitempty"`
}

// Cast writes an asciicast v2 recording: the header line, then one
// [seconds, "o"|"i", text] line per chunk of output or input. It is a
// Recorder, safe for concurrent use; a write error stops the recording
// (Err says so) and never the command.
type Cast struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	err     error
	partial map[string][]byte // an incomplete UTF-8 sequence per stream
}

// NewCast writes the header and returns the recorder.
func NewCast(w io.Writer, h CastHeader, now time.Time) (*Cast, error) {
	h.Version = 2
	if h.Width == 0 {
		h.Width, h.Height = 120, 40
	}
	h.Timestamp = now.Unix()
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	return &Cast{w: w, start: now, partial: map[string][]byte{}}, nil
}

func (c *Cast) Input(p []byte)  { c.event("i", p) }
func (c *Cast) Output(p []byte) { c.event("o", p) }

// Err is the first write error, if any.
func (c *Cast) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Cast) event(kind string, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(p) == 0 {
		return
	}
	// Text events are JSON strings: keep a UTF-8 sequence split across two
	// chunks for the next one, so it is not turned into two replacement
	// characters.
	buf := append(c.partial[kind], p...)
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	c.partial[kind] = append([]byte(nil), buf[cut:]...)
	if cut == 0 {
		return
	}
	text, _ := json.Marshal(string(buf[:cut]))
	t := strconv.FormatFloat(time.Since(c.start).Seconds(), 'f', 6, 64)
	line := make([]byte, 0, len(text)+len(t)+10)
	line = append(line, '[')
	line = append(line, t...)
	line = append(line, `, "`...)
	line = append(line, kind...)
	line = append(line, `", `...)
	line = append(line, text...)
	line = append(line, "]\n"...)
	_, c.err = c.w.Write(line)
}
