package dbbank

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/workload"
)

// The cache keeps, per account, its balance and its newest transfers, each
// beside the account's version (the sequence number of the last transfer
// that changed it). A transfer, once committed and before it is answered,
// replaces both entries of both its accounts with a tombstone of their new
// version. A reader fills an entry only if what is there is older than what
// it read — a value of a lower version, or a tombstone of a version no newer
// than its own — so a reader that read the database before a transfer
// committed and writes after the transfer invalidated cannot put the older
// balance back: the tombstone is newer. Both rules run as Lua scripts,
// atomically in Redis.
//
// Keys carry an epoch, random at Open: a reset, or an invalidation that
// failed (Redis unreachable), moves to a new epoch, and every entry of the
// old one is never read again (and expires after entryTTL). So a transfer
// is never failed for its cache, and a server restarted after a crash never
// reads what its predecessor cached.
type cache struct {
	rdb   *redis.Client
	epoch atomic.Uint64
}

// entryTTL bounds how long an entry, tombstones included, outlives its use.
// A reader would have to stall this long between its database read and its
// fill for a tombstone to expire beneath it.
const entryTTL = time.Hour

const ttlSeconds = int64(entryTTL / time.Second)

// fillScript: KEYS[1] the entry; ARGV[1] the version read, ARGV[2] the
// value, ARGV[3] the TTL in seconds.
var fillScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local v, kind = string.match(cur, '^(%d+)|(%a)')
  v = tonumber(v)
  local mine = tonumber(ARGV[1])
  if v and (v > mine or (v == mine and kind == 'd')) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|d|' .. ARGV[2], 'EX', ARGV[3])
return 1`)

// invalidateScript: KEYS the entries; ARGV[i] the new version of KEYS[i],
// then the TTL in seconds.
var invalidateScript = redis.NewScript(`
local ttl = ARGV[#KEYS + 1]
for i, k in ipairs(KEYS) do
  local cur = redis.call('GET', k)
  local v = cur and tonumber(string.match(cur, '^(%d+)|'))
  if not v or v <= tonumber(ARGV[i]) then
    redis.call('SET', k, ARGV[i] .. '|t', 'EX', ttl)
  end
end
return 1`)

func newCache(ctx context.Context, addr string, pool int) (*cache, error) {
	rdb := redis.NewClient(&redis.Options{
		Addr: addr, PoolSize: 2 * pool, MaxRetries: -1, // a miss, or a new epoch, rather than a retry
		DialTimeout: pingTimeout, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
	})
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("%w: the cache (Redis) at %s does not answer: %w", workload.ErrUnavailable, addr, err)
	}
	c := &cache{rdb: rdb}
	c.epoch.Store(rand.Uint64())
	return c, nil
}

func (c *cache) close() error { return c.rdb.Close() }

// newEpoch abandons every entry cached so far.
func (c *cache) newEpoch() { c.epoch.Add(1) }

// keys are one account's entries in the current epoch.
type keys struct{ balance, history string }

func (c *cache) keys(id uint32) keys {
	p := "locklab:bank:" + strconv.FormatUint(c.epoch.Load(), 16) + ":"
	s := strconv.FormatUint(uint64(id), 10)
	return keys{balance: p + "b:" + s, history: p + "h:" + s}
}

// get returns an entry's value; ok is false for a miss, a tombstone or any
// failure of the cache, when the caller reads the database.
func (c *cache) get(ctx context.Context, key string) (string, bool) {
	s, err := c.rdb.Get(ctx, key).Result()
	if err != nil {
		return "", false
	}
	_, rest, ok := strings.Cut(s, "|")
	if !ok {
		return "", false
	}
	val, ok := strings.CutPrefix(rest, "d|")
	return val, ok
}

func (c *cache) fill(ctx context.Context, key string, version uint64, val string) {
	// A fill that fails leaves a miss: the next reader reads the database.
	_ = fillScript.Run(ctx, c.rdb, []string{key}, version, val, ttlSeconds).Err()
}

func (c *cache) balance(ctx context.Context, k keys) (int64, bool) {
	s, ok := c.get(ctx, k.balance)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func (c *cache) fillBalance(ctx context.Context, k keys, version uint64, bal int64) {
	c.fill(ctx, k.balance, version, strconv.FormatInt(bal, 10))
}

// A history is cached as "seq,from,to,amount" per transfer, newest first,
// joined by ';'.
func (c *cache) history(ctx context.Context, k keys) ([]workload.Transfer, bool) {
	s, ok := c.get(ctx, k.history)
	if !ok {
		return nil, false
	}
	if s == "" {
		return []workload.Transfer{}, true
	}
	parts := strings.Split(s, ";")
	h := make([]workload.Transfer, len(parts))
	for i, p := range parts {
		f := strings.Split(p, ",")
		if len(f) != 4 {
			return nil, false
		}
		seq, e1 := strconv.ParseUint(f[0], 10, 64)
		from, e2 := strconv.ParseUint(f[1], 10, 32)
		to, e3 := strconv.ParseUint(f[2], 10, 32)
		amount, e4 := strconv.ParseInt(f[3], 10, 64)
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
			return nil, false
		}
		h[i] = workload.Transfer{Seq: seq, From: uint32(from), To: uint32(to), Amount: amount}
	}
	return h, true
}

func (c *cache) fillHistory(ctx context.Context, k keys, version uint64, h []workload.Transfer) {
	var sb strings.Builder
	for i, t := range h {
		if i > 0 {
			sb.WriteByte(';')
		}
		fmt.Fprintf(&sb, "%d,%d,%d,%d", t.Seq, t.From, t.To, t.Amount)
	}
	c.fill(ctx, k.history, version, sb.String())
}

// invalidate tombstones both entries of every account touched; if Redis
// cannot be told, the whole cache moves to a new epoch instead.
func (c *cache) invalidate(ctx context.Context, touched []touch) {
	if len(touched) == 0 {
		return
	}
	ks := make([]string, 0, 2*len(touched))
	args := make([]any, 0, 2*len(touched)+1)
	for _, t := range touched {
		k := c.keys(t.id)
		ks = append(ks, k.balance, k.history)
		args = append(args, t.version, t.version)
	}
	args = append(args, ttlSeconds)
	if err := invalidateScript.Run(ctx, c.rdb, ks, args...).Err(); err != nil {
		c.newEpoch()
	}
}
