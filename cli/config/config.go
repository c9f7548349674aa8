// Package config is sandcall's configuration: the sandcall.yaml schema
// (File, every key with its type and default) and the one loading every
// command uses (Load), which merges the operator's files with the
// project's and keeps out the project's keys that need trust until a
// person trusted them.
//
// # Layers
//
// Lowest first: the user's own file (UserFile:
// $XDG_CONFIG_HOME/sandcall/sandcall.yaml, else ~/.config/sandcall/…), then
// either the file named with --config (the operator's) or the project's
// sandcall.yaml (in the project root). A key a higher layer sets replaces
// the lower one's; a section's keys are merged one by one (the project's
// limits.timeout keeps the user's limits.memory_mb). Flags override every
// layer (the caller applies them). Relative paths are relative to the
// directory of the file that names them.
//
// # Trust
//
// The operator's layers are taken as they are. The project's file is
// written by whoever can push to the repository: its keys tagged
// project:"trust" (those that run code, send data elsewhere, pass secrets,
// grant authority or size the machine's processes: store, tracing,
// env_passthrough, audit, principal, auth, workers, pool, openapi, search,
// programs, state) are used only when Options.Trusted says the person
// trusted them, as written (their values' hash); otherwise they are left
// out and Loaded.Ignored names them. A new key that reaches outside the
// process is tagged project:"trust" and is gated with no other change.
//
// Files are read bounded (1 MiB, regular files only) and the project's
// never through a link leaving the project, so a sandcall.yaml that is a
// link to /dev/zero or a FIFO is an error at once.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools/projfile"
	"github.com/sandcall/sandcall/tools/trust"
)

// ProjectFile is the project's config file, in the project root.
const ProjectFile = "sandcall.yaml"

// maxFileBytes caps a config file read.
const maxFileBytes = 1 << 20

// UserFile is the user's own config file: sandcall/sandcall.yaml in the
// user's config directory ($XDG_CONFIG_HOME, else ~/.config); "" when
// there is none.
func UserFile() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "sandcall", ProjectFile)
}

// Options says where the configuration is read from.
type Options struct {
	// Explicit is the file named with --config: the operator's. When set,
	// the project's sandcall.yaml is not read.
	Explicit string
	// User is the user's own file; "" reads UserFile(), "-" none.
	User string
	// Root is the project root, where sandcall.yaml is read. If empty,
	// the working directory.
	Root string
	// Trusted reports whether the keys of the project's file rel (relative
	// to Root) that need trust, whose values hash to hash
	// (trust.ConfigHash), were trusted. If nil, they are (--trust-project).
	Trusted func(rel, hash string) bool
}

// Loaded is the configuration every command uses.
type Loaded struct {
	// File is the merged configuration.
	File *File
	// Files are the files read, lowest layer first.
	Files []string
	// Ignored names the keys of the project's file left out because they
	// need trust, sorted; empty when none were.
	Ignored []string
	// ProjectRel is the project's file, relative to the root, when it was
	// read.
	ProjectRel string
	// ProjectPolicy is true when the policy file is the project's choice
	// (its sandcall.yaml names it): it must be a file of the project.
	ProjectPolicy bool
}

// Load reads and merges the layers. Problems are reported as
// file:line:col: message where the file has a place for them.
func Load(o Options) (*Loaded, error) {
	root := o.Root
	if root == "" {
		root = "."
	}
	user := o.User
	if user == "" {
		user = UserFile()
	}
	out := &Loaded{File: &File{}}
	if user != "-" && user != "" {
		l, err := readLayer(user, "", false)
		if err == nil && l != nil {
			err = l.checkTrusted()
		}
		if err != nil {
			return nil, err
		}
		if l != nil {
			merge(reflect.ValueOf(out.File).Elem(), reflect.ValueOf(l.file).Elem(), l.keys)
			out.Files = append(out.Files, user)
		}
	}
	var top *layer
	if o.Explicit != "" {
		l, err := readLayer(o.Explicit, "", true)
		if err == nil {
			err = l.checkTrusted()
		}
		if err != nil {
			return nil, err
		}
		top = l
	} else {
		path := filepath.Join(root, ProjectFile)
		l, err := readLayer(path, root, false)
		if err != nil {
			return nil, err
		}
		if l != nil {
			out.ProjectRel = projfile.Rel(root, path)
			if o.Trusted != nil {
				if keys := l.trustKeys(); len(keys) > 0 && !o.Trusted(out.ProjectRel, trust.ConfigHash(keys)) {
					out.Ignored = l.drop(slices.Sorted(maps.Keys(keys)))
				}
			}
			if err := l.checkTrusted(); err != nil {
				return nil, err
			}
		}
		top = l
	}
	if top != nil {
		_, setsPolicy := top.keys["policy"]
		out.ProjectPolicy = o.Explicit == "" && setsPolicy
		merge(reflect.ValueOf(out.File).Elem(), reflect.ValueOf(top.file).Elem(), top.keys)
		out.Files = append(out.Files, top.path)
	}
	out.File.Version = 1
	out.File.HTTP.withDefaults()
	return out, nil
}

// ProjectKeys reads the project's sandcall.yaml in root and returns its
// keys that need trust, as written (key → JSON value), and the file
// relative to root; none when there is no file. `sandcall servers trust`
// pins these.
func ProjectKeys(root string) (map[string]json.RawMessage, string, error) {
	path := filepath.Join(root, ProjectFile)
	l, err := readLayer(path, root, false)
	if err != nil || l == nil {
		return nil, "", err
	}
	return l.trustKeys(), projfile.Rel(root, path), nil
}

// Shown is a key's value as `sandcall servers trust` shows it: JSON, with
// header values and the passwords of URLs hidden.
func Shown(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return trust.Quote(v)
	}
	b, _ := json.Marshal(hide(x, false))
	return trust.Quote(b)
}

func hide(x any, secret bool) any {
	switch v := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = hide(e, secret || k == "headers" || k == "sha256")
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = hide(e, secret)
		}
		return out
	case string:
		if secret {
			return "…"
		}
		if i := strings.Index(v, "://"); i >= 0 {
			if at := strings.LastIndex(v[i+3:], "@"); at >= 0 && !strings.Contains(v[i+3:i+3+at], "/") {
				return v[:i+3] + "…@" + v[i+3+at+1:]
			}
		}
	}
	return x
}

// layer is one file read.
type layer struct {
	path string
	file *File
	keys map[string]any // the keys the file sets, as decoded
}

// readLayer reads the file at path (a project's contained in contain); a
// missing file is nil unless explicit.
func readLayer(path, contain string, explicit bool) (*layer, error) {
	src, err := projfile.Read(path, maxFileBytes, contain)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	l := &layer{path: path, file: &File{}}
	if err := yaml.UnmarshalWithOptions(src, l.file, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(path, err)
	}
	if err := yaml.Unmarshal(src, &l.keys); err != nil {
		return nil, yamlError(path, err)
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	paths := []*string{&l.file.Policy, &l.file.Audit, &l.file.Programs.Dir}
	for i := range l.file.OpenAPI {
		o := &l.file.OpenAPI[i]
		if !strings.HasPrefix(o.Spec, "http://") && !strings.HasPrefix(o.Spec, "https://") {
			paths = append(paths, &o.Spec)
		}
		paths = append(paths, &o.Auth.File)
	}
	for i := range l.file.Search.WordFiles {
		paths = append(paths, &l.file.Search.WordFiles[i])
	}
	for _, p := range paths {
		if *p != "" && *p != "-" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return l, nil
}

// check validates the keys anyone may set.
func (l *layer) check() error {
	c := l.file
	if c.Version != 1 {
		return fmt.Errorf("version: want 1, got %d", c.Version)
	}
	if err := c.HTTP.check(); err != nil {
		return err
	}
	if _, err := duration("limits.timeout", c.Limits.Timeout, "30s"); err != nil {
		return err
	}
	if _, err := duration("limits.approval_timeout", c.Limits.ApprovalTimeout, "2m"); err != nil {
		return err
	}
	if c.Limits.MemoryMB < 0 || c.Limits.MaxCalls < 0 || c.Workers < 0 || c.Limits.MaxRequestStateBytes < 0 {
		return errors.New("limits and workers must not be negative")
	}
	if err := c.Programs.check(); err != nil {
		return err
	}
	if err := c.State.check(); err != nil {
		return err
	}
	return c.Pool.check()
}

// checkTrusted validates the keys that need trust that the layer still
// sets (after drop): a key left out is not even parsed further, and a
// store left out is never opened.
func (l *layer) checkTrusted() error {
	c := l.file
	bad := func(format string, a ...any) error { return fmt.Errorf("%s: %s", l.path, fmt.Sprintf(format, a...)) }
	if c.Store != "" {
		st, err := store.Open(c.Store)
		if err != nil {
			return bad("store: %v", err)
		}
		st.Close()
	}
	if c.Principal != nil && c.Principal.ID == "" {
		return bad("principal.id is required")
	}
	for i, name := range c.EnvPassthrough {
		if !envNameOK(name) {
			return bad("env_passthrough[%d]: %q is not a variable name (want letters, digits and _, not starting with a digit)", i, name)
		}
	}
	if c.Auth.JWT != nil {
		if err := c.Auth.JWT.Check(); err != nil {
			return bad("%v", err)
		}
	}
	for i, o := range c.OpenAPI {
		for key, v := range map[string]string{"timeout": o.Timeout, "spec_timeout": o.SpecTimeout} {
			if _, err := duration(fmt.Sprintf("openapi[%d].%s", i, key), v, "30s"); err != nil {
				return bad("%v", err)
			}
		}
		cfg := o.Config()
		if err := cfg.Validate(); err != nil {
			return bad("openapi[%d]: %v", i, err)
		}
		for j := range i {
			if c.OpenAPI[j].Name == o.Name {
				return bad("openapi[%d].name: %q names another source too", i, o.Name)
			}
		}
	}
	if _, err := duration("search.embeddings.timeout", c.Search.Embeddings.Timeout, "2s"); err != nil {
		return bad("%v", err)
	}
	if w := c.Search.Embeddings.Weight; w < 0 || w > 1 {
		return bad("search.embeddings.weight: want from 0 to 1, got %v", w)
	}
	if e := c.Search.Embeddings; e.URL != "" && e.Model == "" {
		return bad("search.embeddings.model is required with a url: the embedding model the server is asked for")
	}
	for i, t := range c.Auth.Tokens {
		if t.Principal == "" {
			return bad("auth.tokens[%d].principal is required", i)
		}
		if len(t.SHA256) != 64 || strings.Trim(strings.ToLower(t.SHA256), "0123456789abcdef") != "" {
			return bad("auth.tokens[%d].sha256: want the 64 hex digits of 'sandcall token hash', not the token", i)
		}
	}
	return nil
}

// trustKeys are the keys the layer sets that need trust, as JSON.
func (l *layer) trustKeys() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	t := reflect.TypeOf(File{})
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if v, ok := l.keys[name]; ok && f.Tag.Get("project") == "trust" {
			b, err := json.Marshal(v)
			if err != nil {
				b, _ = json.Marshal(fmt.Sprint(v))
			}
			out[name] = b
		}
	}
	return out
}

// drop leaves the named top-level keys out of the layer and returns them.
func (l *layer) drop(names []string) []string {
	v := reflect.ValueOf(l.file).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if slices.Contains(names, yamlName(t.Field(i))) {
			v.Field(i).SetZero()
			delete(l.keys, yamlName(t.Field(i)))
		}
	}
	return names
}

// merge sets the fields of dst that keys (the keys src's file sets) name
// to src's; a struct field set as a mapping is merged key by key.
func merge(dst, src reflect.Value, keys map[string]any) {
	t := dst.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if strings.Contains(f.Tag.Get("yaml"), ",inline") {
			merge(dst.Field(i), src.Field(i), keys)
			continue
		}
		v, ok := keys[yamlName(f)]
		if !ok {
			continue
		}
		if sub, isMap := v.(map[string]any); isMap && f.Type.Kind() == reflect.Struct {
			merge(dst.Field(i), src.Field(i), sub)
			continue
		}
		dst.Field(i).Set(src.Field(i))
	}
}

// yamlName is a field's key in sandcall.yaml.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// yamlError is a YAML error as file:line:col: message.
func yamlError(path string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := strings.Join(strings.Fields(ye.GetMessage()), " ")
		msg = strings.Replace(msg, "unknown field ", "unknown key ", 1)
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Errorf("%s:%d:%d: %s", path, tk.Position.Line, tk.Position.Column, msg)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	return fmt.Errorf("%s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
}
