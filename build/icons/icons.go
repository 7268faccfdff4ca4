// Package icons draws Yett's application icon (the lattice gate of the
// window's logo, frontend/src/components/Logo.svelte) at every size the
// packages need, and encodes the Windows .ico and macOS .icns containers.
//
// The icon is geometry, not a picture: yett.svg in this directory is the
// scalable copy for desktops that take SVG, and Render draws the same shapes
// with supersampling (at least 2x2 samples a pixel, up to 16x16 for the
// small sizes), so every size is drawn for its grid rather than scaled down
// from a large bitmap. The committed files are regenerated with
//
//	go test ./build/icons -update
//
// and TestCommittedIconsAreCurrent fails when one no longer matches.
package icons

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
)

// Sizes are the hicolor theme sizes the Linux packages install
// (build/icons/hicolor/<n>x<n>/apps/yett.png).
var Sizes = []int{16, 22, 24, 32, 48, 64, 128, 256, 512}

// The logo's colours: the accent and the ink on it (app.css, light theme).
var (
	accent = color.NRGBA{0x27, 0x6a, 0x64, 0xff}
	ink    = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// The shapes, in the logo's 32-unit viewBox (yett.svg says the same).
const (
	plateMin, plateMax, plateRadius = 2.0, 30.0, 6.0
	barHalfWidth                    = 1.25
)

// bars are the lattice's strokes as segments with round caps.
var bars = [][4]float64{
	{11, 7, 11, 25}, {16, 7, 16, 25}, {21, 7, 21, 25}, // uprights
	{7, 12, 25, 12}, {7, 19, 25, 19}, // rails
}

// Render draws the icon on a size x size canvas.
func Render(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	ss := min(max(1024/size, 2), 16) // samples per pixel side
	scale := 32.0 / float64(size)
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var onPlate, onBar int
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/float64(ss)) * scale
					y := (float64(py) + (float64(sy)+0.5)/float64(ss)) * scale
					if !inPlate(x, y) {
						continue
					}
					onPlate++
					if inBar(x, y) {
						onBar++
					}
				}
			}
			if onPlate == 0 {
				continue
			}
			// Ink over accent, weighted by coverage; alpha is the plate's.
			f := float64(onBar) / float64(onPlate)
			mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a)*(1-f) + float64(b)*f)) }
			img.SetNRGBA(px, py, color.NRGBA{
				R: mix(accent.R, ink.R), G: mix(accent.G, ink.G), B: mix(accent.B, ink.B),
				A: uint8(math.Round(255 * float64(onPlate) / float64(ss*ss))),
			})
		}
	}
	return img
}

func inPlate(x, y float64) bool {
	if x < plateMin || x > plateMax || y < plateMin || y > plateMax {
		return false
	}
	// Distance into a corner's square decides the rounded corners.
	cx := math.Max(plateMin+plateRadius-x, x-(plateMax-plateRadius))
	cy := math.Max(plateMin+plateRadius-y, y-(plateMax-plateRadius))
	if cx <= 0 || cy <= 0 {
		return true
	}
	return cx*cx+cy*cy <= plateRadius*plateRadius
}

func inBar(x, y float64) bool {
	for _, b := range bars {
		if segmentDistance(x, y, b) <= barHalfWidth {
			return true
		}
	}
	return false
}

func segmentDistance(x, y float64, s [4]float64) float64 {
	dx, dy := s[2]-s[0], s[3]-s[1]
	t := ((x-s[0])*dx + (y-s[1])*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(x-(s[0]+t*dx), y-(s[1]+t*dy))
}

// pngs keeps each size's PNG once drawn: the containers repeat sizes.
var pngs sync.Map // int -> []byte

// PNG is Render(size) as a PNG file.
func PNG(size int) []byte {
	if b, ok := pngs.Load(size); ok {
		return b.([]byte)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, Render(size)); err != nil {
		panic("icons: " + err.Error()) // encoding an in-memory image cannot fail
	}
	pngs.Store(size, b.Bytes())
	return b.Bytes()
}

// ICO is a Windows icon with PNG images at 16, 24, 32, 48, 64 and 256
// pixels (PNG entries are read by Windows Vista and later).
func ICO() []byte {
	sizes := []int{16, 24, 32, 48, 64, 256}
	var dir, data bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&dir, le, [3]uint16{0, 1, uint16(len(sizes))}) // reserved, type icon, count
	offset := 6 + 16*len(sizes)
	for _, s := range sizes {
		p := PNG(s)
		dim := uint8(s)
		if s >= 256 {
			dim = 0 // 0 means 256
		}
		dir.Write([]byte{dim, dim, 0, 0})        // width, height, palette, reserved
		binary.Write(&dir, le, [2]uint16{1, 32}) // planes, bits per pixel
		binary.Write(&dir, le, [2]uint32{uint32(len(p)), uint32(offset + data.Len())})
		data.Write(p)
	}
	return append(dir.Bytes(), data.Bytes()...)
}

// ICNS is a macOS icon family with PNG images: 16, 32, 64, 128, 256, 512
// and 1024 pixels under the types macOS 10.8 and later read.
func ICNS() []byte {
	entries := []struct {
		typ  string
		size int
	}{
		{"icp4", 16}, {"icp5", 32}, {"icp6", 64}, {"ic07", 128}, {"ic08", 256}, {"ic09", 512}, {"ic10", 1024},
		{"ic11", 32}, {"ic12", 64}, {"ic13", 256}, {"ic14", 512},
	}
	var body bytes.Buffer
	for _, e := range entries {
		p := PNG(e.size)
		body.WriteString(e.typ)
		binary.Write(&body, binary.BigEndian, uint32(8+len(p)))
		body.Write(p)
	}
	var out bytes.Buffer
	out.WriteString("icns")
	binary.Write(&out, binary.BigEndian, uint32(8+body.Len()))
	out.Write(body.Bytes())
	return out.Bytes()
}
