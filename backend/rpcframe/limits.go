package rpcframe

// Defaults from DESIGN.md: socket frame cap 8 MiB, JSON depth 64.
const (
	DefaultMaxFrameBytes = 8 << 20
	DefaultMaxDepth      = 64
)

// Limits bounds what one frame may cost. Zero fields take the defaults.
type Limits struct {
	// MaxFrameBytes is the largest frame accepted, newline excluded.
	MaxFrameBytes int
	// MaxDepth is the deepest nesting of arrays and objects accepted; the
	// top-level object counts as depth 1.
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrameBytes <= 0 {
		l.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}
