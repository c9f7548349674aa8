package upstream

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/sandcall/sandcall/sandbox/jsonscan"
	"github.com/sandcall/sandcall/tools/projfile"
)

// SetEnabled turns the server of e on or off in the config file that
// defines it (e.Source, under e.Key): enabled=false sets "enabled": false,
// enabled=true removes the "enabled" key. Every other server, key and
// value is kept, in its order, and so are comments and layout (the bytes
// are edited, not re-encoded); the file is replaced atomically with its
// mode kept. It reports whether the file
// changed. The change takes effect when the config is next loaded (the
// next start of `sandcall serve`).
func SetEnabled(e Entry, enabled bool) (changed bool, err error) {
	if e.Source == "" || e.Key == "" {
		return false, fmt.Errorf("server %q: no config file recorded", e.Name)
	}
	fi, err := os.Stat(e.Source)
	if err != nil {
		return false, err
	}
	data, err := projfile.Read(e.Source, maxConfigBytes, "")
	if err != nil {
		return false, err
	}
	out, changed, err := setEnabled(data, e.Key, e.Name, enabled)
	if err != nil {
		return false, fmt.Errorf("%s: %w", e.Source, err)
	}
	if !changed {
		return false, nil
	}
	return true, projfile.WriteAtomic(e.Source, out, fi.Mode().Perm())
}

// setEnabled edits the text of a config file in place: only the bytes of
// the server's "enabled" member change (set to false, or removed with its
// comma for true; a new one is inserted first in the server's object, on
// its own line when the object spans lines), so comments, spacing, key
// order and number spellings stay as they were.
func setEnabled(data []byte, key, name string, enabled bool) ([]byte, bool, error) {
	s := stripJSONC(data)
	at := jsonscan.Space(s, 0)
	top, _, err := objectMembers(s, at)
	if err != nil {
		return nil, false, err
	}
	var def *span
	for _, t := range top {
		if t.key != key {
			continue
		}
		servers, _, err := objectMembers(s, t.valAt)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", key, err)
		}
		for k := range servers {
			if servers[k].key == name {
				def = &servers[k]
			}
		}
	}
	if def == nil {
		return nil, false, fmt.Errorf("no server %q under %q", name, key)
	}
	members, end, err := objectMembers(s, def.valAt)
	if err != nil {
		return nil, false, fmt.Errorf("%s.%s: %w", key, name, err)
	}
	var en *span
	for k := range members {
		if members[k].key == "enabled" {
			en = &members[k]
		}
	}
	edit := func(from, to int, with string) []byte {
		out := append([]byte(nil), data[:from]...)
		out = append(out, with...)
		return append(out, data[to:]...)
	}
	switch {
	case enabled && en == nil:
		return data, false, nil
	case enabled: // remove the member and one comma next to it
		next := jsonscan.Space(s, en.valEnd)
		if next < len(s) && s[next] == ',' {
			return edit(en.keyAt, jsonscan.Space(s, next+1), ""), true, nil
		}
		prev := en.keyAt - 1
		for prev > def.valAt && (s[prev] == ' ' || s[prev] == '\t' || s[prev] == '\n' || s[prev] == '\r') {
			prev--
		}
		if s[prev] == ',' {
			return edit(prev, en.valEnd, ""), true, nil
		}
		return edit(en.keyAt, en.valEnd, ""), true, nil
	case en != nil:
		if string(data[en.valAt:en.valEnd]) == "false" {
			return data, false, nil
		}
		return edit(en.valAt, en.valEnd, "false"), true, nil
	case len(members) == 0:
		return edit(def.valAt+1, end, `"enabled": false`), true, nil
	default:
		first := members[0].keyAt
		gap := string(data[def.valAt+1 : first]) // the indentation of the first member
		if !bytes.ContainsAny([]byte(gap), "\n") {
			gap = ""
		}
		return edit(first, first, `"enabled": false,`+gapOrSpace(gap)), true, nil
	}
}

// gapOrSpace is the whitespace before an object's first member, to put
// after an inserted member: a newline and indentation, or one space.
func gapOrSpace(gap string) string {
	if i := strings.LastIndexByte(gap, '\n'); i >= 0 {
		return gap[i:]
	}
	return " "
}
