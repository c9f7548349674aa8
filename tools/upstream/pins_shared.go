package upstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sandcall/sandcall/store"
)

// Pins shared by replicas.
//
// With a shared store (Share; store.Redis behind a load balancer), the
// pins live in the store, one key per pin ("pin:" + PinKey), so that a pin
// made or approved on one replica (or by `sandcall tools approve` against
// the same store) holds on every other: a changed definition is disabled
// everywhere, and an approval re-enables it everywhere. A counter
// ("pins-version") is bumped by every Pin; Reload reads it, so each
// replica's watch lists its servers' tools again when another one changed
// a pin. The file is then read once, to carry its pins into the store
// (SET NX: a pin the store already holds wins), and not written.

// pinTTL is the life of a pin in the store: it must outlive any
// deployment (the store interface has no "forever"); every Check that
// finds a pin does not refresh it.
const pinTTL = 10 * 365 * 24 * time.Hour

// pinsVersionKey is the store key of the pins' change counter.
const pinsVersionKey = "pins-version"

// sharedTimeout bounds one store operation on pins.
const sharedTimeout = 5 * time.Second

func sharedPinKey(name string) string { return "pin:" + name }

// Share makes p keep its pins in st, shared by every replica that shares
// st, from now on. The pins already known (read from the file) are copied
// into st where it has none. An error (the store cannot be reached) is
// returned, and the copy is tried again at the next Check; p is shared
// either way.
func (p *Pins) Share(st store.Store) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	p.shared = st
	return p.seedLocked()
}

// Shared reports whether p keeps its pins in a shared store.
func (p *Pins) Shared() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shared != nil
}

// watched reports whether the pins can change outside this process (a
// file, or a shared store), so that the Set polls Reload.
func (p *Pins) watched() bool { return p.Path() != "" || p.Shared() }

func sharedCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), sharedTimeout)
}

// seedLocked copies the pins known to the store (once) and reads the
// version. p.mu is held.
func (p *Pins) seedLocked() error {
	if p.seeded {
		return nil
	}
	ctx, cancel := sharedCtx()
	defer cancel()
	if !p.readOnly {
		for name, h := range p.hashes {
			if _, err := p.shared.SetNX(ctx, sharedPinKey(name), []byte(h), pinTTL); err != nil {
				return sharedError(err)
			}
		}
	}
	v, err := p.shared.Get(ctx, pinsVersionKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return sharedError(err)
	}
	p.version, p.seeded = string(v), true
	return nil
}

func sharedError(err error) error {
	return fmt.Errorf("%w: the shared store: %v", ErrPinFile, err)
}

// getShared returns the pin of name in the store.
func (p *Pins) getShared(ctx context.Context, name string) (string, bool, error) {
	b, err := p.shared.Get(ctx, sharedPinKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, sharedError(err)
	}
	return string(b), true, nil
}

// checkShared is CheckMigrating on the store. A first sight is pinned with
// SET NX, so that two replicas seeing a tool at once agree on one pin (the
// second one judges its definition against the first's). When the store
// cannot be reached, the pins known to this process judge, and a first
// sight is trusted for this process only, as with a pin file that cannot
// be written; the error is returned.
func (p *Pins) checkShared(defs, legacy map[string]string) (map[string]bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	var firstErr error
	if err := p.seedLocked(); err != nil {
		firstErr = err
	}
	ctx, cancel := sharedCtx()
	defer cancel()
	ok := make(map[string]bool, len(defs))
	judge := func(name, hash, old string) {
		p.hashes[name] = old
		if old == hash {
			delete(p.pending, name)
			ok[name] = true
			return
		}
		p.pending[name] = hash
		ok[name] = false
	}
	for name, hash := range defs {
		old, known, err := "", false, firstErr
		if err == nil {
			old, known, err = p.getShared(ctx, name)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if h, had := p.hashes[name]; had {
				judge(name, hash, h)
			} else {
				p.hashes[name] = hash
				ok[name] = true
			}
			continue
		}
		if known {
			judge(name, hash, old)
			continue
		}
		// A version 1 pin of the catalog name (from the file) is never
		// passed over: a different definition is pending.
		if ln, has := legacy[name]; has {
			if h, had := p.hashes[ln]; had && h != hash {
				p.pending[name] = hash
				ok[name] = false
				continue
			}
		}
		if p.readOnly {
			p.hashes[name] = hash
			ok[name] = true
			continue
		}
		set, err := p.shared.SetNX(ctx, sharedPinKey(name), []byte(hash), pinTTL)
		if err == nil && !set { // pinned by another replica meanwhile
			old, known, err = p.getShared(ctx, name)
			if err == nil && known {
				judge(name, hash, old)
				continue
			}
		}
		if err != nil && firstErr == nil {
			firstErr = sharedError(err)
		}
		p.hashes[name] = hash
		delete(p.pending, name)
		ok[name] = true
	}
	return ok, firstErr
}

// pinSharedLocked is Pin's write to the store: the pin is set and, when
// it changed, the version bumped so that every replica lists its tools
// again. It returns the previous pin. p.mu is held.
func (p *Pins) pinSharedLocked(name, hash string) (string, error) {
	ctx, cancel := sharedCtx()
	defer cancel()
	old, _, err := p.getShared(ctx, name)
	if err != nil {
		return "", err
	}
	if err := p.shared.Set(ctx, sharedPinKey(name), []byte(hash), pinTTL); err != nil {
		return "", sharedError(err)
	}
	if old != hash {
		if _, err := p.shared.Incr(ctx, pinsVersionKey, pinTTL); err != nil {
			return "", sharedError(err)
		}
	}
	return old, nil
}

// reloadShared reports whether any replica changed a pin since the last
// Reload (the version moved).
func (p *Pins) reloadShared() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.seedLocked(); err != nil {
		return false, err
	}
	ctx, cancel := sharedCtx()
	defer cancel()
	v, err := p.shared.Get(ctx, pinsVersionKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, sharedError(err)
	}
	if string(v) == p.version {
		return false, nil
	}
	if _, perr := strconv.ParseInt(string(v), 10, 64); perr != nil && len(v) > 0 {
		return false, sharedError(perr)
	}
	p.version = string(v)
	return true, nil
}
