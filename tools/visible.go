package tools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
)

// Visible returns s with every character a person cannot see, or that
// changes how the text around it is shown, written as a visible JSON-style
// escape: bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E,
// U+200F, U+061C), zero-width characters (U+200B–U+200D, U+2060, U+FEFF),
// every other format character (Unicode category Cf), control characters,
// and the line and paragraph separators. "‮0001 DSU‬" becomes
// "\u202E0001 DSU\u202C", not "USD 1000" (Trojan Source). Approval prompts
// and audit records go through it, so a person reads what will run. Escaping
// inside a JSON string keeps it valid JSON of the same value; a character
// outside the Basic Multilingual Plane is written as a surrogate pair.
func Visible(s string) string {
	if !hasInvisible(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if !invisible(r) {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04X\u%04X`, hi, lo)
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	return b.String()
}

func hasInvisible(s string) bool {
	for _, r := range s {
		if invisible(r) {
			return true
		}
	}
	return false
}

// invisible: control characters except tab and newline (kept so that a
// multi-line prompt stays readable), format characters, and U+2028/U+2029.
func invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return r >= 0xa0 && unicode.Is(unicode.Cf, r)
}
