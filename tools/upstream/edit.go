package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// SetEnabled turns the server of e on or off in the config file that
// defines it (e.Source, under e.Key): enabled=false sets "enabled": false,
// enabled=true removes the "enabled" key. Every other server, key and
// value is kept, in its order; the file is re-indented with two spaces and
// replaced atomically with its mode kept. It reports whether the file
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
	data, err := os.ReadFile(e.Source)
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
	return true, WriteFileAtomic(e.Source, out, fi.Mode().Perm())
}

// member is one key and raw value of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// setEnabled edits the JSON text of a config file.
func setEnabled(data []byte, key, name string, enabled bool) ([]byte, bool, error) {
	top, err := decodeObject(data)
	if err != nil {
		return nil, false, err
	}
	found, changed := false, false
	for i := range top {
		if top[i].key != key {
			continue
		}
		servers, err := decodeObject(top[i].val)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", key, err)
		}
		for j := range servers {
			if servers[j].key != name {
				continue
			}
			found = true
			def, err := decodeObject(servers[j].val)
			if err != nil {
				return nil, false, fmt.Errorf("%s.%s: %w", key, name, err)
			}
			def, c := setMember(def, "enabled", enabled)
			if c {
				changed = true
				servers[j].val = encodeObject(def)
			}
		}
		top[i].val = encodeObject(servers)
	}
	if !found {
		return nil, false, fmt.Errorf("no server %q under %q", name, key)
	}
	if !changed {
		return data, false, nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, encodeObject(top), "", "  "); err != nil {
		return nil, false, err
	}
	out.WriteByte('\n')
	return out.Bytes(), true, nil
}

// setMember sets "enabled": false, or removes the key for true.
func setMember(def []member, k string, enabled bool) ([]member, bool) {
	var out []member
	changed := false
	had := false
	for _, m := range def {
		if m.key != k {
			out = append(out, m)
			continue
		}
		had = true
		if enabled {
			changed = true
			continue
		}
		if string(bytes.TrimSpace(m.val)) != "false" {
			changed = true
		}
		out = append(out, member{k, json.RawMessage("false")})
	}
	if !enabled && !had {
		out = append(out, member{k, json.RawMessage("false")})
		changed = true
	}
	return out, changed
}

// decodeObject splits a JSON object into its members, in order.
func decodeObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return ms, nil
}

// encodeObject is the compact JSON of members.
func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
