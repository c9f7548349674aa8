package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Redis namespace is an index, a hash of key → "size:expires_ms"
// (expires_ms 0: never), and one Redis key per value, with its own expiry.
// Both names carry the namespace's length, so no namespace's keys can
// look like another's.
func spaceIndex(ns string) string {
	return Prefix + "space:" + strconv.Itoa(len(ns)) + ":" + ns + ":idx"
}

func spaceValue(ns, key string) string {
	return Prefix + "space:" + strconv.Itoa(len(ns)) + ":" + ns + ":v:" + key
}

// spacePutScript checks the quota against the index (dropping expired
// entries on the way) and stores the value, atomically, on the Redis
// clock. KEYS: index, value key. ARGV: key, value, ttl_ms, max_keys,
// max_bytes. It returns {1} or {0, "keys"|"bytes", used}.
var spacePutScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local maxKeys = tonumber(ARGV[4])
local maxBytes = tonumber(ARGV[5])
local all = redis.call('HGETALL', KEYS[1])
local n, bytes, forever, latest = 0, 0, false, 0
for i = 1, #all, 2 do
  local sz, exp = string.match(all[i + 1], '^(%d+):(%d+)$')
  sz = tonumber(sz); exp = tonumber(exp)
  if exp ~= 0 and exp <= now then
    redis.call('HDEL', KEYS[1], all[i])
  elseif all[i] ~= ARGV[1] then
    n = n + 1
    bytes = bytes + sz
    if exp == 0 then forever = true elseif exp > latest then latest = exp end
  end
end
local size = string.len(ARGV[1]) + string.len(ARGV[2])
if maxKeys > 0 and n + 1 > maxKeys then return {0, 'keys', n} end
if maxBytes > 0 and bytes + size > maxBytes then return {0, 'bytes', bytes} end
local exp = 0
if ttl > 0 then
  exp = now + ttl
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
  if exp > latest then latest = exp end
else
  redis.call('SET', KEYS[2], ARGV[2])
  forever = true
end
redis.call('HSET', KEYS[1], ARGV[1], size .. ':' .. exp)
if forever then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIREAT', KEYS[1], latest) end
return {1}`)

func (r *Redis) SpaceGet(ctx context.Context, ns, key string) ([]byte, error) {
	b, err := r.c.Get(ctx, spaceValue(ns, key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, unavailable(err)
}

func (r *Redis) SpacePut(ctx context.Context, ns, key string, value []byte, ttl time.Duration, q Quota) error {
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	res, err := spacePutScript.Run(ctx, r.c, []string{spaceIndex(ns), spaceValue(ns, key)},
		key, value, ms, q.MaxKeys, q.MaxBytes).Slice()
	if err != nil {
		return unavailable(err)
	}
	if ok, _ := res[0].(int64); ok == 1 {
		return nil
	}
	which, _ := res[1].(string)
	used, _ := res[2].(int64)
	return &QuotaError{Keys: which == "keys", Used: used}
}

func (r *Redis) SpaceDelete(ctx context.Context, ns, key string) (bool, error) {
	pipe := r.c.TxPipeline()
	del := pipe.Del(ctx, spaceValue(ns, key))
	pipe.HDel(ctx, spaceIndex(ns), key)
	if _, err := pipe.Exec(ctx); err != nil {
		return false, unavailable(err)
	}
	return del.Val() > 0, nil
}

func (r *Redis) SpaceKeys(ctx context.Context, ns, prefix string, limit int) ([]string, error) {
	all, err := r.c.HGetAll(ctx, spaceIndex(ns)).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	t, err := r.c.Time(ctx).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	now := t.UnixMilli()
	var out []string
	for k, v := range all {
		_, exp, _ := strings.Cut(v, ":")
		e, _ := strconv.ParseInt(exp, 10, 64)
		if (e == 0 || e > now) && strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return sortLimit(out, limit), nil
}
