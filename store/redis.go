package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Prefix starts every key sandcall writes to Redis, so that one Redis can
// serve other applications too.
const Prefix = "sandcall:"

// Redis is a Store in a Redis server, shared by every replica that names it.
// Time-based state (token buckets) uses the Redis server's clock, so the
// replicas' clocks need not agree.
type Redis struct {
	c *redis.Client
}

var _ Store = (*Redis)(nil)

// NewRedis returns a Redis store for url (redis://[user:pass@]host:port[/db]).
// It does not connect yet: the first operation does, and the client
// reconnects by itself after the server comes back.
func NewRedis(url string) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("store: invalid Redis URL %s: %v", redact(url), err)
	}
	// Short timeouts: a call that waits on Redis holds a run.
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = 2 * time.Second
	opt.WriteTimeout = 2 * time.Second
	opt.MaxRetries = 1
	return &Redis{c: redis.NewClient(opt)}, nil
}

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: redis: %v", ErrUnavailable, err)
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.Get(ctx, Prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, unavailable(err)
}

func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return unavailable(r.c.Set(ctx, Prefix+key, value, ttl).Err())
}

func (r *Redis) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	ok, err := r.c.SetNX(ctx, Prefix+key, value, ttl).Result()
	return ok, unavailable(err)
}

func (r *Redis) Delete(ctx context.Context, key string) error {
	return unavailable(r.c.Del(ctx, Prefix+key).Err())
}

// GetDel is Redis's GETDEL (Redis 6.2 or later).
func (r *Redis) GetDel(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.GetDel(ctx, Prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, unavailable(err)
}

// incrScript increments and sets the expiry on creation, atomically.
var incrScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`)

func (r *Redis) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	n, err := incrScript.Run(ctx, r.c, []string{Prefix + key}, ttl.Milliseconds()).Int64()
	return n, unavailable(err)
}

// takeScript is a token bucket on the Redis clock (microseconds): refill
// since the last take, take one if there is one, keep the bucket until it
// would be full again.
var takeScript = redis.NewScript(`
local cap = tonumber(ARGV[1])
local per = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local v = redis.call('HMGET', KEYS[1], 'tokens', 'last')
local tokens = tonumber(v[1])
local last = tonumber(v[2])
if tokens == nil or last == nil then tokens = cap; last = now end
if now > last then
  tokens = math.min(cap, tokens + cap * (now - last) / per)
  last = now
end
local ok = 0
if tokens >= 1 then tokens = tokens - 1; ok = 1 end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'last', string.format('%d', last))
redis.call('PEXPIRE', KEYS[1], math.ceil(per / 1000) + 1000)
return ok`)

func (r *Redis) Take(ctx context.Context, key string, capacity int, per time.Duration) (bool, error) {
	if capacity <= 0 || per <= 0 {
		return false, nil
	}
	n, err := takeScript.Run(ctx, r.c, []string{Prefix + key}, capacity, per.Microseconds()).Int64()
	return n == 1, unavailable(err)
}

func (r *Redis) Ping(ctx context.Context) error { return unavailable(r.c.Ping(ctx).Err()) }

func (r *Redis) Close() error { return r.c.Close() }
