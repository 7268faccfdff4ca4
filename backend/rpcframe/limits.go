package rpcframe

// Defaults from DESIGN.md: socket frame cap 8 MiB, JSON depth 64; and the
// work one connection may hold at a time: 32 calls in flight, 32 MiB of
// their frames.
const (
	DefaultMaxFrameBytes = 8 << 20
	DefaultMaxDepth      = 64
	DefaultMaxInFlight   = 32
	DefaultMaxHeldBytes  = 32 << 20
)

// Limits bounds what one frame may cost. Zero fields take the defaults.
type Limits struct {
	// MaxFrameBytes is the largest frame accepted, newline excluded.
	MaxFrameBytes int
	// MaxDepth is the deepest nesting of arrays and objects accepted; the
	// top-level object counts as depth 1.
	MaxDepth int
	// MaxInFlight bounds the calls (requests with an id) of one connection
	// that have not been answered yet, and MaxHeldBytes the sum of their
	// frame sizes. A call over either bound is answered BUSY at once and
	// never reaches the SDK. Only Transport uses them.
	MaxInFlight  int
	MaxHeldBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrameBytes <= 0 {
		l.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxHeldBytes <= 0 {
		l.MaxHeldBytes = DefaultMaxHeldBytes
	}
	return l
}
