package sandbox

// NestingOK scans the JavaScript or TypeScript program src for bracket
// depth, skipping comments and quoted strings, and reports the line where it
// first exceeds max. Both the JavaScript engine and the TypeScript
// transpiler check it before parsing, since their parsers recurse once per
// level. It over-approximates (brackets inside regular expression and
// template literals count), which only matters for absurd programs. Runs of
// prefix operators (!!!!x, - - - x) count as nesting too: the parser recurses
// on them as well.
func NestingOK(src string, max int) (line int, ok bool) {
	depth, run := 0, 0
	line = 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '\n':
			line++
		case '(', '[', '{':
			depth++
			run = 0
			if depth > max {
				return line, false
			}
			continue
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '!', '~', '+', '-':
			run++
			if depth+run > max {
				return line, false
			}
			continue
		case ' ', '\t', '\r':
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
				i--
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				i += 2
				for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
					if src[i] == '\n' {
						line++
					}
					i++
				}
				i++
				continue
			}
		case '"', '\'':
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		}
		run = 0
	}
	return line, true
}
