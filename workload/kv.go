package workload

// Limits of the key-value workload (DESIGN.md §3).
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
	m map[string]kvEntry
}

// NewKV returns an empty map.
func NewKV() *KV { return &KV{m: make(map[string]kvEntry)} }

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
		e := kv.m[cmd.Key]
		e.version++
		e.value = append([]byte(nil), cmd.Value...)
		kv.m[cmd.Key] = e
		return KVResult{Version: e.version}, nil
	case KVGet:
		if err := validKey(cmd.Key); err != nil {
			return KVResult{}, err
		}
		e, ok := kv.m[cmd.Key]
		if !ok {
			return KVResult{}, ErrNoKey
		}
		return KVResult{Value: append([]byte(nil), e.value...), Version: e.version}, nil
	case KVReset:
		clear(kv.m)
		return KVResult{}, nil
	case KVLen:
		return KVResult{Version: uint64(len(kv.m))}, nil
	default:
		return KVResult{}, ErrUnknownOp
	}
}
