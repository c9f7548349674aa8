package js

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/dop251/goja"
)

// Lazy tool results.
//
// A parsed document (lazyDoc) reaches the guest as goja dynamic objects and
// arrays whose handlers (lazyObject, lazyArray) create members on first
// access and memoize them per node, so o.x === o.x. The handlers return only
// goja primitives and other lazy wrappers; the guest never reaches Go values
// or methods (a handler is never passed to Runtime.ToValue).
//
// They are copy-on-write: the first Set, Delete or SetLen copies the
// container's current members into its own state (members already handed
// out stay the same objects) and marks it and its ancestors dirty. A clean
// container whose bytes are canonical is converted back to JSON by copying
// them.

// lazyDoc is one parsed JSON document of a run.
type lazyDoc struct {
	r     *run
	s     string
	nodes []jnode
	kids  []int32
	memo  []goja.Value // by node index, allocated on first use
	// objs holds the object handlers, allocated together on first use.
	objs []lazyObject
	nobj int
}

var (
	lazyObjectType = reflect.TypeOf((*lazyObject)(nil))
	lazyArrayType  = reflect.TypeOf((*lazyArray)(nil))
)

// value returns the guest value of node n (memoized).
func (d *lazyDoc) value(n int32, parent *lazyBase) goja.Value {
	if d.memo == nil {
		d.memo = make([]goja.Value, len(d.nodes))
	}
	if v := d.memo[n]; v != nil {
		return v
	}
	v := d.make(n, parent)
	d.memo[n] = v
	return v
}

func (d *lazyDoc) make(n int32, parent *lazyBase) goja.Value {
	r := d.r
	nd := &d.nodes[n]
	switch nd.kind {
	case kNull:
		return goja.Null()
	case kTrue:
		return r.g.trueV
	case kFalse:
		return r.g.falseV
	case kNumber:
		return numberValue(r.rt, d.s[nd.start:nd.end])
	case kString:
		if nd.flags&fEsc == 0 {
			return r.stringValue(d.s[nd.start+1 : nd.end-1])
		}
		return decodeString(d.s[nd.start:nd.end])
	case kObject:
		// Handlers are allocated together; the slab never grows (each
		// object node is made once), so the pointers stay valid.
		var w *lazyObject
		if d.objs == nil {
			d.objs = make([]lazyObject, 0, d.nobj)
		}
		if len(d.objs) < cap(d.objs) {
			d.objs = append(d.objs, lazyObject{lazyBase: lazyBase{doc: d, node: n, parent: parent}})
			w = &d.objs[len(d.objs)-1]
		} else {
			w = &lazyObject{lazyBase: lazyBase{doc: d, node: n, parent: parent}}
		}
		w.obj = r.rt.NewDynamicObject(w)
		if r.g.lazyObjProto == nil {
			r.g.lazyObjProto = w.obj.Prototype()
		}
		return w.obj
	default:
		w := &lazyArray{lazyBase: lazyBase{doc: d, node: n, parent: parent}}
		w.obj = r.rt.NewDynamicArray(w)
		if r.g.lazyArrProto == nil {
			r.g.lazyArrProto = w.obj.Prototype()
		}
		return w.obj
	}
}

// Short strings are shared within a run (values like "travel" repeat in
// every row); a guest cannot tell two equal primitive strings apart.
const (
	internMaxLen     = 16
	internMaxEntries = 4096
)

func (r *run) stringValue(s string) goja.Value {
	if len(s) > internMaxLen {
		return r.rt.ToValue(s)
	}
	if v, ok := r.interned[s]; ok {
		return v
	}
	v := r.rt.ToValue(s)
	if len(r.interned) < internMaxEntries {
		if r.interned == nil {
			r.interned = make(map[string]goja.Value)
		}
		r.interned[s] = v
	}
	return v
}

// key returns the decoded key of key node k (lone surrogates become
// U+FFFD, as goja's property keys are Go strings).
func (d *lazyDoc) key(k int32) string {
	nd := &d.nodes[k]
	if nd.flags&fEsc == 0 {
		return d.s[nd.start+1 : nd.end-1]
	}
	return decodeString(d.s[nd.start:nd.end]).String()
}

// lazyBase is what object and array wrappers share.
type lazyBase struct {
	doc    *lazyDoc
	node   int32
	dirty  bool // this container or one below it was changed
	parent *lazyBase
	obj    *goja.Object
}

// touch marks the container and its ancestors dirty.
func (b *lazyBase) touch() {
	for w := b; w != nil && !w.dirty; w = w.parent {
		w.dirty = true
	}
}

// canonical reports whether the container may be written as its original
// bytes: unchanged, and those bytes are what JSON.stringify would give.
func (b *lazyBase) canonical() bool {
	return !b.dirty && b.doc.nodes[b.node].flags&fCanon != 0
}

// raw returns the original bytes of the container.
func (b *lazyBase) raw() string {
	nd := &b.doc.nodes[b.node]
	return b.doc.s[nd.start:nd.end]
}

// protosIntact reports whether every wrapper created in the subtree still
// has its original prototype (a guest toJSON on another prototype would
// make JSON.stringify differ from the original bytes).
func (b *lazyBase) protosIntact() bool {
	d := b.doc
	g := &d.r.g
	if d.memo == nil {
		return true
	}
	for i := b.node; i < d.nodes[b.node].last; i++ {
		o, ok := d.memo[i].(*goja.Object)
		if !ok {
			continue
		}
		want := g.lazyObjProto
		if d.nodes[i].kind == kArray {
			want = g.lazyArrProto
		}
		if o.Prototype() != want {
			return false
		}
	}
	return true
}

// objState is the own state of a changed object. Like a plain goja
// object, it keeps array-index keys first, in ascending order (nidx of
// them), then the other keys in insertion order.
type objState struct {
	keys  []string
	vals  []goja.Value
	nidx  int
	index map[string]int // for large objects
}

// insert adds a new key where a plain object would enumerate it.
func (s *objState) insert(key string, val goja.Value) {
	pos := len(s.keys)
	if idx := arrayIndex(key); idx >= 0 {
		pos = sort.Search(s.nidx, func(j int) bool { return arrayIndex(s.keys[j]) >= idx })
		s.nidx++
	}
	s.keys = slices.Insert(s.keys, pos, key)
	s.vals = slices.Insert(s.vals, pos, val)
	switch {
	case pos != len(s.keys)-1 || (s.index == nil && len(s.keys) > 16):
		s.reindex()
	case s.index != nil:
		s.index[key] = pos
	}
}

// remove deletes the key at i.
func (s *objState) remove(i int) {
	if i < s.nidx {
		s.nidx--
	}
	s.keys = slices.Delete(s.keys, i, i+1)
	s.vals = slices.Delete(s.vals, i, i+1)
	if s.index != nil {
		s.reindex()
	}
}

func (s *objState) find(key string) int {
	if s.index != nil {
		if i, ok := s.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range s.keys {
		if k == key {
			return i
		}
	}
	return -1
}

func (s *objState) reindex() {
	if len(s.keys) <= 16 {
		s.index = nil
		return
	}
	s.index = make(map[string]int, len(s.keys))
	for i, k := range s.keys {
		s.index[k] = i
	}
}

// lazyObject is the goja.DynamicObject handler of a JSON object.
type lazyObject struct {
	lazyBase
	keys  []string         // enumeration order while clean (computed once)
	index map[string]int32 // key → value node, for large clean objects
	own   *objState        // after the first change
}

var _ goja.DynamicObject = (*lazyObject)(nil)

// find returns the value node of key in the document, or -1. A repeated
// key's last value wins, as in JSON.parse.
func (w *lazyObject) find(key string) int32 {
	d := w.doc
	nd := &d.nodes[w.node]
	if nd.n > 16 {
		if w.index == nil {
			w.index = make(map[string]int32, nd.n)
			for i := int32(0); i < nd.n; i++ {
				w.index[d.key(d.kids[nd.kid+2*i])] = d.kids[nd.kid+2*i+1]
			}
		}
		if v, ok := w.index[key]; ok {
			return v
		}
		return -1
	}
	for i := nd.n - 1; i >= 0; i-- {
		k := d.kids[nd.kid+2*i]
		kn := &d.nodes[k]
		if kn.flags&fEsc == 0 {
			if d.s[kn.start+1:kn.end-1] == key {
				return d.kids[nd.kid+2*i+1]
			}
		} else if d.key(k) == key {
			return d.kids[nd.kid+2*i+1]
		}
	}
	return -1
}

// Get implements goja.DynamicObject.
func (w *lazyObject) Get(key string) goja.Value {
	if w.own != nil {
		if i := w.own.find(key); i >= 0 {
			return w.own.vals[i]
		}
		return nil
	}
	if v := w.find(key); v >= 0 {
		return w.doc.value(v, &w.lazyBase)
	}
	return nil
}

// Has implements goja.DynamicObject.
func (w *lazyObject) Has(key string) bool {
	if w.own != nil {
		return w.own.find(key) >= 0
	}
	return w.find(key) >= 0
}

// cow copies the object's members into its own state.
func (w *lazyObject) cow() *objState {
	if w.own != nil {
		return w.own
	}
	keys := w.ordered()
	s := &objState{keys: slices.Clone(keys), vals: make([]goja.Value, len(keys))}
	for i, k := range keys {
		s.vals[i] = w.doc.value(w.find(k), &w.lazyBase)
		if isArrayIndex(k) {
			s.nidx++
		}
	}
	s.reindex()
	w.own, w.keys, w.index = s, nil, nil
	return s
}

// Set implements goja.DynamicObject.
func (w *lazyObject) Set(key string, val goja.Value) bool {
	s := w.cow()
	w.touch()
	if i := s.find(key); i >= 0 {
		s.vals[i] = val
		return true
	}
	s.insert(key, val)
	return true
}

// Delete implements goja.DynamicObject.
func (w *lazyObject) Delete(key string) bool {
	if !w.Has(key) {
		return true
	}
	s := w.cow()
	w.touch()
	s.remove(s.find(key))
	return true
}

// Keys implements goja.DynamicObject: the order a plain object would
// enumerate (array indices ascending, then the other keys in the order they
// were first added). goja iterates the slice it gets while
// guest code may run, so a changed object's keys are copied.
func (w *lazyObject) Keys() []string {
	if w.own != nil {
		return slices.Clone(w.own.keys)
	}
	return w.ordered()
}

// ordered returns the clean object's enumeration order (shared, not to be
// modified).
func (w *lazyObject) ordered() []string {
	if w.keys != nil {
		return w.keys
	}
	d := w.doc
	nd := &d.nodes[w.node]
	keys := make([]string, 0, nd.n)
	if nd.flags&fPlainKeys != 0 {
		for i := int32(0); i < nd.n; i++ {
			k := &d.nodes[d.kids[nd.kid+2*i]]
			keys = append(keys, d.s[k.start+1:k.end-1])
		}
		w.keys = keys
		return keys
	}
	seen := make(map[string]struct{}, nd.n)
	nidx := 0
	for i := int32(0); i < nd.n; i++ {
		k := d.key(d.kids[nd.kid+2*i])
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		keys = append(keys, k)
		if isArrayIndex(k) {
			nidx++
		}
	}
	if nidx > 0 {
		sort.SliceStable(keys, func(i, j int) bool {
			ai, aj := arrayIndex(keys[i]), arrayIndex(keys[j])
			switch {
			case ai >= 0 && aj >= 0:
				return ai < aj
			default:
				return ai >= 0 && aj < 0
			}
		})
	}
	w.keys = keys
	return keys
}

// lazyArray is the goja.DynamicArray handler of a JSON array.
//
// goja's dynamic arrays are dense: delete a[i] stores undefined (no hole),
// and they have no own properties besides indices and length.
type lazyArray struct {
	lazyBase
	own  []goja.Value // after the first change
	cows bool
}

var _ goja.DynamicArray = (*lazyArray)(nil)

// Len implements goja.DynamicArray.
func (a *lazyArray) Len() int {
	if a.cows {
		return len(a.own)
	}
	return int(a.doc.nodes[a.node].n)
}

// Get implements goja.DynamicArray.
func (a *lazyArray) Get(idx int) goja.Value {
	if a.cows {
		if idx < 0 || idx >= len(a.own) {
			return nil
		}
		return a.own[idx]
	}
	nd := &a.doc.nodes[a.node]
	if idx < 0 || idx >= int(nd.n) {
		return nil
	}
	return a.doc.value(a.doc.kids[int(nd.kid)+idx], &a.lazyBase)
}

func (a *lazyArray) cow() {
	if a.cows {
		return
	}
	n := a.Len()
	own := make([]goja.Value, n)
	for i := range own {
		own[i] = a.Get(i)
	}
	a.own, a.cows = own, true
}

// grow checks that a dense array of n elements fits the memory guard.
func (a *lazyArray) grow(n int) bool {
	r := a.doc.r
	if n <= a.Len() {
		return true
	}
	if int64(n)*16 > r.limits.MemoryBytes {
		r.stop(memoryError(fmt.Sprintf("growing an array to %d elements would go over the %d MiB memory limit",
			n, r.limits.MemoryBytes>>20)))
		return false
	}
	return true
}

// Set implements goja.DynamicArray. Negative indices are refused (a plain
// array would store them as ordinary properties).
func (a *lazyArray) Set(idx int, val goja.Value) bool {
	if idx < 0 || !a.grow(idx+1) {
		return false
	}
	a.cow()
	a.touch()
	if idx >= len(a.own) {
		a.setLen(idx + 1)
	}
	a.own[idx] = val
	return true
}

// SetLen implements goja.DynamicArray.
func (a *lazyArray) SetLen(n int) bool {
	if n < 0 || !a.grow(n) {
		return false
	}
	if n == a.Len() {
		return true
	}
	a.cow()
	a.touch()
	a.setLen(n)
	return true
}

func (a *lazyArray) setLen(n int) {
	if n <= len(a.own) {
		clear(a.own[n:])
		a.own = a.own[:n]
		return
	}
	for len(a.own) < n {
		a.own = append(a.own, goja.Undefined())
	}
}

// lazyOf returns the handler of a lazy wrapper, or nil.
func lazyOf(o *goja.Object) (obj *lazyObject, arr *lazyArray) {
	switch o.ExportType() {
	case lazyObjectType:
		obj, _ = o.Export().(*lazyObject)
	case lazyArrayType:
		arr, _ = o.Export().(*lazyArray)
	}
	return obj, arr
}
