package cli

import (
	"github.com/sandcall/sandcall/store"
	"github.com/sandcall/sandcall/tools/upstream"
)

// sharePins keeps the pins of upstream tool definitions in the shared
// store when sandcall.yaml names one (store: redis://…), so that every
// replica, and `sandcall tools approve` run against the same store, see
// the same pins: a definition changed is disabled on every replica, and an
// approval re-enables it on every replica. The pin file's pins are carried
// into the store once; the file is then only read. With no store (or
// memory:), the pin file alone, as before. The error is that of a store
// that cannot be reached: the pins are shared anyway and the store is
// tried again at each check.
func sharePins(c *common, pins *upstream.Pins) error {
	if c.cfg == nil || c.cfg.Store == "" || c.cfg.Store == "memory:" {
		return nil
	}
	st := c.shared
	if st == nil {
		s, err := store.Open(c.cfg.Store)
		if err != nil {
			return err
		}
		c.closers = append(c.closers, func() { s.Close() })
		st = s
	}
	return pins.Share(st)
}
