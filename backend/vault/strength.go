package vault

import (
	"math"
	"unicode/utf8"
)

// Strength is the advice shown about a passphrase being chosen. Only
// MinPassphraseChars is enforced (Create refuses less); the rest is advice,
// the same the setup screen gives (frontend/src/lib/passphrase.ts), so that
// `yett init` and the app say the same about the same passphrase
// (passphrase.vectors.json holds both to it).
type Strength struct {
	Level string // "too short", "weak", "fair" or "strong"
	Bits  int    // a rough guessing-entropy estimate
	Hint  string // follows the level's name ("Weak: easy to guess. ...")
}

// AssessPassphrase estimates strength from length and character variety,
// discounting repeats and runs ("aaaa", "1234", "abcd"), which guessers try
// early. Characters are counted as code points.
func AssessPassphrase(p []byte) Strength {
	runes := []rune(string(p))
	defer clear(runes)
	if utf8.RuneCount(p) < MinPassphraseChars {
		return Strength{Level: "too short", Hint: "use at least 12 characters. Four or more unrelated words work well."}
	}
	effective := 0.0
	unique := map[rune]bool{}
	for i, r := range runes {
		unique[r] = true
		// Repeats and ±1 runs add almost nothing for a guesser.
		if i > 0 {
			if d := r - runes[i-1]; d >= -1 && d <= 1 {
				effective += 0.25
				continue
			}
		}
		effective++
	}
	bits := int(math.Round(effective * math.Log2(math.Max(float64(charsetSize(runes)), 2)) * math.Min(1, float64(len(unique))/8)))
	switch {
	case bits < 50:
		return Strength{Level: "weak", Bits: bits, Hint: "easy to guess. Add more unrelated words or characters."}
	case bits < 75:
		return Strength{Level: "fair", Bits: bits, Hint: "a few more words would make it much stronger."}
	}
	return Strength{Level: "strong", Bits: bits, Hint: "write it down somewhere safe: Yett cannot recover it."}
}

func charsetSize(rs []rune) int {
	var lower, upper, digit, other bool
	for _, r := range rs {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	size := 0
	for _, c := range []struct {
		on bool
		n  int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
		if c.on {
			size += c.n
		}
	}
	return size
}
