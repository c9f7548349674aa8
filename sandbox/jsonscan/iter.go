package jsonscan

// Iter walks the items of an array, or the members of an object, of valid
// JSON, one at a time and without storing them: an array of millions of
// tiny items costs nothing beyond the walk.
type Iter struct {
	b []byte
	i int
}

// Elems returns an iterator over the items of the array, or the members of
// the object, whose opening bracket is b[at].
func Elems(b []byte, at int) Iter { return Iter{b: b, i: Space(b, at+1)} }

// Next returns the span of the next item of an array, or false at its end
// (for an object, use Member).
func (it *Iter) Next() (start, end int, ok bool) {
	b, i := it.b, it.i
	if i >= len(b) || b[i] == ']' || b[i] == '}' {
		return 0, 0, false
	}
	end = Skip(b, i)
	it.i = it.after(end)
	return i, end, true
}

// Member returns the spans of the next member of an object: its key (with
// the quotes) and its value; or false at the object's end.
func (it *Iter) Member() (keyStart, keyEnd, valStart, valEnd int, ok bool) {
	b, i := it.b, it.i
	if i >= len(b) || b[i] == ']' || b[i] == '}' {
		return 0, 0, 0, 0, false
	}
	keyStart, keyEnd = i, Skip(b, i)
	valStart = Space(b, Space(b, keyEnd)+1) // past the ':'
	valEnd = Skip(b, valStart)
	it.i = it.after(valEnd)
	return keyStart, keyEnd, valStart, valEnd, true
}

// after returns where the next element starts, past the white space and
// the comma that follow an element ending at end.
func (it *Iter) after(end int) int {
	j := Space(it.b, end)
	if j < len(it.b) && it.b[j] == ',' {
		j = Space(it.b, j+1)
	}
	return j
}

// Count returns the number of items of the array whose opening bracket
// is b[at].
func Count(b []byte, at int) int {
	n := 0
	for it := Elems(b, at); ; n++ {
		if _, _, ok := it.Next(); !ok {
			return n
		}
	}
}
