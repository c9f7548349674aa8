package bindings

import (
	"context"
	"time"

	"github.com/sandcall/sandcall/store"
)

// rateStoreKey carries a policy.RateStore from Broker.authorize to
// PolicyAuthorizer.Authorize.
type rateStoreKey struct{}

// sharedTimeout bounds one operation on the shared store during a call.
const sharedTimeout = 2 * time.Second

// sharedRates counts policy rate limits in a store.Store.
type sharedRates struct{ s store.Store }

func (r sharedRates) TakeRate(key string, capacity int, per time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	return r.s.Take(ctx, key, capacity, per)
}
