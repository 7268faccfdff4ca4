package sshhosts

import (
	"bufio"
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/yettdev/yett/backend/vault"
)

// RecordingsDir is the data directory's folder of sealed session
// recordings.
const RecordingsDir = "ssh-recordings"

// recordingPurpose is the vault blob purpose that seals each recording's
// own key.
const recordingPurpose = "ssh session recording"

const (
	recordingExt = ".yrec"
	// maxFrame bounds one sealed frame (the gateway's writes are chunks of
	// a command's output, far smaller).
	maxFrame = 4 << 20
	// MaxRecordingBytes bounds what Recording reads back.
	MaxRecordingBytes = 256 << 20
)

// Errors of recordings.
var (
	// ErrNoRecording: no recording by that id.
	ErrNoRecording = errors.New("sshhost: no such recording")
	// ErrRecordingDamaged: the file does not authenticate (altered,
	// reordered, from another vault); nothing of it is shown.
	ErrRecordingDamaged = errors.New("sshhost: the recording does not authenticate; it was altered or belongs to another vault")
)

// RecordingView is one recording as a person lists it.
type RecordingView struct {
	ID      string    `json:"id"` // the call's request id
	HostID  string    `json:"host_id"`
	Started time.Time `json:"started"`
	Bytes   int64     `json:"bytes"` // the sealed file's size
}

// Recording is one recording read back.
type Recording struct {
	RecordingView
	// Cast is the asciicast v2 text.
	Cast []byte `json:"cast"`
	// Complete: the recording was closed; false when Yett stopped while
	// the command ran (what it holds is what was recorded until then).
	Complete bool `json:"complete"`
}

// recordingHeader is a recording file's first line, in the clear (what it
// names is in the audit log too) and authenticated with every frame.
type recordingHeader struct {
	V       int       `json:"v"`
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	// Key is the recording's own key, sealed under the vault (SealBlob).
	Key []byte `json:"key"`
}

// recordings keeps sealed recordings in a directory, one file each: the
// header line, then frames (a 4-byte big-endian length and a
// ChaCha20-Poly1305 box). Frame n's nonce is n with a last-frame flag;
// each frame's associated data is the header line's hash, so frames can
// be neither reordered, moved to another recording, nor cut off unseen.
type recordings struct {
	dir string
	v   *vault.Vault
}

func openRecordings(dir string, v *vault.Vault) (*recordings, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sshhost: making the recordings folder: %w", err)
	}
	return &recordings{dir: dir, v: v}, nil
}

func validRecordingID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func keyAD(id, host string) []byte { return []byte(id + "\x00" + host) }

func frameNonce(n uint64, last bool) []byte {
	nonce := make([]byte, chacha20poly1305.NonceSize)
	binary.BigEndian.PutUint64(nonce[3:11], n)
	if last {
		nonce[11] = 1
	}
	return nonce
}

// create starts a recording of call id on host: it works only while the
// vault is unlocked (its key is sealed under it). The writer seals each
// write as a frame as it comes, so a recording cut short by a crash keeps
// what came before.
func (r *recordings) create(id, hostID string) (io.WriteCloser, error) {
	if !validRecordingID(id) {
		return nil, fmt.Errorf("%w: recording id", ErrInvalid)
	}
	key := make([]byte, chacha20poly1305.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	sealed, err := r.v.SealBlob(recordingPurpose, keyAD(id, hostID), key)
	if err != nil {
		clear(key)
		return nil, err
	}
	aead, err := chacha20poly1305.New(key)
	clear(key)
	if err != nil {
		return nil, err
	}
	hdr, err := json.Marshal(recordingHeader{V: 1, ID: id, Host: hostID, Started: time.Now().UTC(), Key: sealed})
	if err != nil {
		return nil, err
	}
	hdr = append(hdr, '\n')
	f, err := os.OpenFile(filepath.Join(r.dir, id+recordingExt), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sshhost: starting a recording: %w", err)
	}
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return nil, err
	}
	ad := sha256.Sum256(hdr)
	return &recordingWriter{f: f, aead: aead, ad: ad[:]}, nil
}

type recordingWriter struct {
	mu     sync.Mutex
	f      *os.File
	aead   cipher.AEAD
	ad     []byte
	n      uint64
	err    error
	closed bool
}

func (w *recordingWriter) frame(p []byte, last bool) error {
	box := w.aead.Seal(nil, frameNonce(w.n, last), p, w.ad)
	w.n++
	buf := make([]byte, 4, 4+len(box))
	binary.BigEndian.PutUint32(buf, uint32(len(box)))
	_, err := w.f.Write(append(buf, box...))
	return err
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, os.ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	for rest := p; len(rest) > 0; {
		n := min(len(rest), maxFrame-chacha20poly1305.Overhead)
		if w.err = w.frame(rest[:n], false); w.err != nil {
			return 0, w.err
		}
		rest = rest[n:]
	}
	return len(p), nil
}

// Close writes the last frame, which marks the recording complete.
func (w *recordingWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return os.ErrClosed
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.frame(nil, true)
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readHeader(br *bufio.Reader) (recordingHeader, []byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return recordingHeader{}, nil, ErrRecordingDamaged
	}
	var h recordingHeader
	if json.Unmarshal(line, &h) != nil || h.V != 1 || !validRecordingID(h.ID) {
		return recordingHeader{}, nil, ErrRecordingDamaged
	}
	return h, bytes.Clone(line), nil
}

// list reads the headers of the recordings of hostID ("" for all), newest
// first.
func (r *recordings) list(hostID string) ([]RecordingView, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	out := []RecordingView{}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, recordingExt) {
			continue
		}
		f, err := os.Open(filepath.Join(r.dir, name))
		if err != nil {
			continue
		}
		h, _, err := readHeader(bufio.NewReaderSize(f, 4096))
		st, serr := f.Stat()
		f.Close()
		if err != nil || serr != nil || h.ID+recordingExt != name || (hostID != "" && h.Host != hostID) {
			continue
		}
		out = append(out, RecordingView{ID: h.ID, HostID: h.Host, Started: h.Started, Bytes: st.Size()})
	}
	slices.SortFunc(out, func(a, b RecordingView) int { return b.Started.Compare(a.Started) })
	return out, nil
}

// read opens one recording (only while the vault is unlocked).
func (r *recordings) read(id string) (*Recording, error) {
	if !validRecordingID(id) {
		return nil, ErrNoRecording
	}
	f, err := os.Open(filepath.Join(r.dir, id+recordingExt))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoRecording
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(io.LimitReader(f, MaxRecordingBytes))
	h, line, err := readHeader(br)
	if err != nil || h.ID != id {
		return nil, ErrRecordingDamaged
	}
	key, err := r.v.OpenBlob(recordingPurpose, keyAD(h.ID, h.Host), h.Key)
	if errors.Is(err, vault.ErrBlob) {
		return nil, ErrRecordingDamaged
	}
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.New(key)
	clear(key)
	if err != nil {
		return nil, ErrRecordingDamaged
	}
	ad := sha256.Sum256(line)
	out := &Recording{RecordingView: RecordingView{ID: h.ID, HostID: h.Host, Started: h.Started, Bytes: st.Size()}}
	var lenBuf [4]byte
	for n := uint64(0); ; n++ {
		if _, err := io.ReadFull(br, lenBuf[:]); err == io.EOF {
			return out, nil // cut short: what was recorded until then
		} else if err != nil {
			return nil, ErrRecordingDamaged
		}
		size := binary.BigEndian.Uint32(lenBuf[:])
		if size < chacha20poly1305.Overhead || size > maxFrame {
			return nil, ErrRecordingDamaged
		}
		box := make([]byte, size)
		if _, err := io.ReadFull(br, box); err != nil {
			return nil, ErrRecordingDamaged
		}
		if pt, err := aead.Open(nil, frameNonce(n, false), box, ad[:]); err == nil {
			out.Cast = append(out.Cast, pt...)
			continue
		}
		if _, err := aead.Open(nil, frameNonce(n, true), box, ad[:]); err != nil {
			return nil, ErrRecordingDamaged
		}
		if _, err := br.ReadByte(); err != io.EOF {
			return nil, ErrRecordingDamaged // nothing may follow the last frame
		}
		out.Complete = true
		return out, nil
	}
}

// Create starts the recording of one call on a host (the gateway's
// Recordings). It needs the vault unlocked.
func (m *Registry) Create(requestID, hostID string) (io.WriteCloser, error) {
	return m.rec.create(requestID, hostID)
}

// Recordings lists a host's recordings ("" for every host's), newest
// first.
func (m *Registry) Recordings(hostID string) ([]RecordingView, error) { return m.rec.list(hostID) }

// Recording reads one recording back. Errors: vault.ErrLocked,
// ErrNoRecording, ErrRecordingDamaged.
func (m *Registry) Recording(id string) (*Recording, error) { return m.rec.read(id) }
