package icons

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the committed icon files")

// committed lists every generated file the packages use, with its content.
func committed() map[string]func() []byte {
	files := map[string]func() []byte{
		"../windows/yett.ico": ICO,
		"../darwin/yett.icns": ICNS,
	}
	for _, s := range Sizes {
		files[fmt.Sprintf("hicolor/%dx%d/apps/yett.png", s, s)] = func() []byte { return PNG(s) }
	}
	return files
}

// TestCommittedIconsAreCurrent: the icons the packages ship are what the
// geometry here draws; a change to one without the other fails.
func TestCommittedIconsAreCurrent(t *testing.T) {
	for path, gen := range committed() {
		want := gen()
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (go test ./build/icons -update writes it)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what Render draws now: go test ./build/icons -update", path)
		}
	}
}

// TestRenderDrawsTheGate: the plate is opaque teal in the middle of a
// cell, the bars are white, and the corners are transparent.
func TestRenderDrawsTheGate(t *testing.T) {
	img := Render(64)
	at := func(x, y float64) [4]uint8 {
		c := img.NRGBAAt(int(x*2), int(y*2))
		return [4]uint8{c.R, c.G, c.B, c.A}
	}
	if c := at(0.5, 0.5); c[3] != 0 {
		t.Errorf("corner is not transparent: %v", c)
	}
	if c := at(13.5, 15.5); c != [4]uint8{accent.R, accent.G, accent.B, 255} {
		t.Errorf("a cell of the lattice is %v, want the accent", c)
	}
	if c := at(16.2, 9.2); c != [4]uint8{255, 255, 255, 255} {
		t.Errorf("an upright is %v, want white", c)
	}
}

// TestContainersDecode: every image in the .ico and the .icns is a PNG of
// the size its entry claims.
func TestContainersDecode(t *testing.T) {
	ico := ICO()
	n := int(ico[4]) | int(ico[5])<<8
	for i := 0; i < n; i++ {
		e := ico[6+16*i:]
		size := int(e[0])
		if size == 0 {
			size = 256
		}
		length := int(e[8]) | int(e[9])<<8 | int(e[10])<<16 | int(e[11])<<24
		off := int(e[12]) | int(e[13])<<8 | int(e[14])<<16 | int(e[15])<<24
		checkPNG(t, "ico", ico[off:off+length], size)
	}
	icns := ICNS()
	if string(icns[:4]) != "icns" || int(be32(icns[4:])) != len(icns) {
		t.Fatal("icns header")
	}
	sizes := map[string]int{"icp4": 16, "icp5": 32, "icp6": 64, "ic07": 128, "ic08": 256, "ic09": 512, "ic10": 1024,
		"ic11": 32, "ic12": 64, "ic13": 256, "ic14": 512}
	for rest := icns[8:]; len(rest) > 0; {
		typ, l := string(rest[:4]), int(be32(rest[4:]))
		checkPNG(t, "icns "+typ, rest[8:l], sizes[typ])
		rest = rest[l:]
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func checkPNG(t *testing.T, where string, b []byte, size int) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != size || cfg.Height != size {
		t.Errorf("%s: %v %dx%d, want %d", where, err, cfg.Width, cfg.Height, size)
	}
}
