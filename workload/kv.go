package workload

// Limits of the key-value workload (docs/design.md §key-value-map).
const (
	MaxKeyLen   = 256
	MaxValueLen = 1 << 20
	// DefaultValueSize is the size of the rpcx benchmark's message, the value
	// size the load scripts use unless told otherwise.
	DefaultValueSize = 581
)

// KVOp selects what a KVCmd does.
type KVOp uint8

const (
	// KVPut stores Value under Key and returns the key's new version (1 for a
	// new key).
	KVPut KVOp = iota + 1
	// KVGet returns the value and version stored under Key.
	KVGet
	// KVReset removes every key.
	KVReset
	// KVLen returns the number of keys in Version.
	KVLen
)

// KVCmd is a command for KV.
type KVCmd struct {
	Op    KVOp
	Key   string
	Value []byte
}

// KVResult is what a KV command returns. Value is a fresh copy the caller owns.
type KVResult struct {
	Value   []byte
	Version uint64
}

type kvEntry struct {
	value   []byte
	version uint64
}

// KV maps string keys to byte values, each with a version that counts its Puts.
type KV struct {
	// shards[shardOf(key)] holds the key. One map until SetShards: a Go
	// map may not be written by two goroutines at once, so the sharded
	// designs need one per shard.
	shards []map[string]kvEntry
}

// NewKV returns an empty map.
func NewKV() *KV { return &KV{shards: []map[string]kvEntry{{}}} }

func validKey(k string) error {
	switch {
	case k == "":
		return ErrEmptyKey
	case len(k) > MaxKeyLen:
		return ErrKeyTooLong
	}
	return nil
}

// Apply runs cmd. Put keeps a copy of Value, and Get returns a copy, so no
// caller ever shares memory with the map.
func (kv *KV) Apply(cmd KVCmd) (KVResult, error) {
	switch cmd.Op {
	case KVPut:
		if err := validKey(cmd.Key); err != nil {
			return KVResult{}, err
		}
		if len(cmd.Value) > MaxValueLen {
			return KVResult{}, ErrValueTooLarge
		}
		m := kv.shards[kv.shardOf(cmd.Key)]
		e := m[cmd.Key]
		e.version++
		e.value = append([]byte(nil), cmd.Value...)
		m[cmd.Key] = e
		return KVResult{Version: e.version}, nil
	case KVGet:
		if err := validKey(cmd.Key); err != nil {
			return KVResult{}, err
		}
		e, ok := kv.shards[kv.shardOf(cmd.Key)][cmd.Key]
		if !ok {
			return KVResult{}, ErrNoKey
		}
		return KVResult{Value: append([]byte(nil), e.value...), Version: e.version}, nil
	case KVReset:
		for _, m := range kv.shards {
			clear(m)
		}
		return KVResult{}, nil
	case KVLen:
		n := 0
		for _, m := range kv.shards {
			n += len(m)
		}
		return KVResult{Version: uint64(n)}, nil
	default:
		return KVResult{}, ErrUnknownOp
	}
}

// ReadOnly reports whether cmd only reads (store.ReadOnly).
func (kv *KV) ReadOnly(cmd KVCmd) bool { return cmd.Op == KVGet || cmd.Op == KVLen }

// SetShards splits the map into n, by a hash of the key (store.Sharded). It
// is called before the first Apply; keys already stored move to their shard.
func (kv *KV) SetShards(n int) {
	old := kv.shards
	kv.shards = make([]map[string]kvEntry, max(n, 1))
	for i := range kv.shards {
		kv.shards[i] = map[string]kvEntry{}
	}
	for _, m := range old {
		for k, e := range m {
			kv.shards[kv.shardOf(k)][k] = e
		}
	}
}

// ShardsOf reports the shard of cmd's key, or every shard (-1) for a reset or
// a count (store.Sharded).
func (kv *KV) ShardsOf(cmd KVCmd) (int, int) {
	switch cmd.Op {
	case KVReset, KVLen:
		return -1, -1
	}
	s := kv.shardOf(cmd.Key)
	return s, s
}

// shardOf hashes key with FNV-1a, which allocates nothing.
func (kv *KV) shardOf(key string) int {
	if len(kv.shards) == 1 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % uint32(len(kv.shards)))
}
