package search

import (
	"sync"
	"time"

	"github.com/sandcall/sandcall/tools"
)

// Live is a search index kept in step with a catalog. After the catalog
// changes (a burst of changes counts as one: rebuildDelay after the last),
// the next index is built in the background, so a search rarely waits for
// a build; a search that arrives before it is ready builds it itself. It
// is safe for concurrent use.
type Live struct {
	cat  *tools.Catalog
	opts Options

	mu    sync.Mutex  // guards ix, gen and timer
	ix    *Index      // nil: stale
	gen   uint64      // bumped on every change
	timer *time.Timer // the pending background build
}

// rebuildDelay is how long Live waits after a catalog change before it
// rebuilds in the background.
const rebuildDelay = 50 * time.Millisecond

// NewLive returns a Live index of cat, built in the background
// (rebuildDelay from now) or by the first search, whichever comes first:
// a command that never searches (`sandcall run`) does not build it on its
// start-up path.
func NewLive(cat *tools.Catalog) *Live { return NewLiveWith(cat, Options{}) }

// NewLiveWith is NewLive with options: every index it builds uses them.
func NewLiveWith(cat *tools.Catalog, o Options) *Live {
	l := &Live{cat: cat, opts: o}
	cat.OnChange(l.invalidate)
	l.invalidate()
	return l
}

func (l *Live) invalidate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ix = nil
	l.gen++
	if l.timer == nil {
		l.timer = time.AfterFunc(rebuildDelay, l.build)
	} else {
		l.timer.Reset(rebuildDelay)
	}
}

// build indexes the catalog, unless a search got there first; a change
// during the build leaves the index stale.
func (l *Live) build() {
	l.mu.Lock()
	gen, done := l.gen, l.ix != nil
	l.mu.Unlock()
	if done {
		return
	}
	ix := NewWith(l.cat.List(), l.opts)
	l.mu.Lock()
	if l.gen == gen && l.ix == nil {
		l.ix = ix
	}
	l.mu.Unlock()
}

// Index returns the current index, building it if the catalog changed and
// the background build has not finished.
func (l *Live) Index() *Index {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		l.ix = NewWith(l.cat.List(), l.opts)
	}
	return l.ix
}
