package ts

import "strings"

// vlqDigit maps a base64 character to its value, or -1.
var vlqDigit = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = int8(i)
	}
	return t
}()

// readVLQ decodes one base64 VLQ value of a source map's mappings at s[i:].
func readVLQ(s string, i int) (v, next int, ok bool) {
	shift, acc := 0, 0
	for ; i < len(s); i++ {
		d := vlqDigit[s[i]]
		if d < 0 || shift > 30 {
			return 0, i, false
		}
		acc |= int(d&31) << shift
		shift += 5
		if d&32 == 0 {
			v = acc >> 1
			if acc&1 != 0 {
				v = -v
			}
			return v, i + 1, true
		}
	}
	return 0, i, false
}

// lookup finds the original position (0-based line, 0-based UTF-16 column)
// of the generated position (0-based line, 0-based UTF-16 column) in the
// mappings of a version 3 source map: the last mapped segment at or before
// col on that line; the line's first segment if col is before it; the last
// segment of an earlier line if the line has none.
func lookup(mappings string, line, col int) (srcLine, srcCol int, ok bool) {
	genLine, genCol := 0, 0
	sLine, sCol, sIdx := 0, 0, 0
	onLine := false // a segment of the target line was seen
	for i := 0; i < len(mappings); {
		switch mappings[i] {
		case ';':
			if genLine == line {
				return srcLine, srcCol, ok
			}
			genLine++
			genCol = 0
			i++
			continue
		case ',':
			i++
			continue
		}
		var d, dIdx, dLine, dCol int
		var good bool
		if d, i, good = readVLQ(mappings, i); !good {
			return srcLine, srcCol, ok
		}
		genCol += d
		if i >= len(mappings) || mappings[i] == ',' || mappings[i] == ';' {
			continue // a segment without a source
		}
		if dIdx, i, good = readVLQ(mappings, i); !good {
			return srcLine, srcCol, ok
		}
		if dLine, i, good = readVLQ(mappings, i); !good {
			return srcLine, srcCol, ok
		}
		if dCol, i, good = readVLQ(mappings, i); !good {
			return srcLine, srcCol, ok
		}
		sIdx, sLine, sCol = sIdx+dIdx, sLine+dLine, sCol+dCol
		if i < len(mappings) && mappings[i] != ',' && mappings[i] != ';' {
			if _, i, good = readVLQ(mappings, i); !good { // the name index
				return srcLine, srcCol, ok
			}
		}
		if genLine < line {
			srcLine, srcCol, ok = sLine, sCol, true
			continue
		}
		if !onLine || genCol <= col {
			srcLine, srcCol, ok, onLine = sLine, sCol, true, true
		}
		if genCol > col {
			return srcLine, srcCol, ok // later segments start further right still
		}
	}
	return srcLine, srcCol, ok
}

// nthLine returns line n (0-based) of s, without its newline.
func nthLine(s string, n int) string {
	for ; n > 0; n-- {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return ""
		}
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// utf16Col converts a 0-based byte offset in line to UTF-16 code units.
func utf16Col(line string, bytes int) int {
	if bytes > len(line) {
		return bytes - len(line) + utf16Col(line, len(line))
	}
	n := 0
	for _, r := range line[:bytes] {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// byteCol converts a 0-based UTF-16 column in line to a byte offset.
func byteCol(line string, units int) int {
	n := 0
	for i, r := range line {
		if n >= units {
			return i
		}
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return len(line) + max(units-n, 0)
}
