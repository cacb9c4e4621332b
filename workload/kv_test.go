package workload_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/workload"
)

func kvPut(t *testing.T, kv *workload.KV, key string, value []byte) uint64 {
	t.Helper()
	r, err := kv.Apply(workload.KVCmd{Op: workload.KVPut, Key: key, Value: value})
	require.NoError(t, err)
	return r.Version
}

// kvSnapshot is what a test can observe of a KV through the given keys: the
// number of keys, and each key's value and version or the error Get returns.
type kvSnapshot struct {
	len     uint64
	entries map[string]kvEntry
}

type kvEntry struct {
	r   workload.KVResult
	err error
}

func snapshotKV(t *testing.T, kv *workload.KV, keys []string) kvSnapshot {
	t.Helper()
	n, err := kv.Apply(workload.KVCmd{Op: workload.KVLen})
	require.NoError(t, err)
	s := kvSnapshot{len: n.Version, entries: make(map[string]kvEntry)}
	for _, k := range keys {
		r, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: k})
		s.entries[k] = kvEntry{r, err}
	}
	return s
}

func TestKVPut(t *testing.T) {
	key256 := strings.Repeat("k", workload.MaxKeyLen)
	key257 := strings.Repeat("k", workload.MaxKeyLen+1)
	// 86 three-byte runes: short in characters, 258 bytes long. The limit is
	// on bytes, which is what the server receives.
	multibyte := strings.Repeat("€", 86)
	mib := bytes.Repeat([]byte{'v'}, workload.MaxValueLen)
	mibPlus1 := bytes.Repeat([]byte{'v'}, workload.MaxValueLen+1)

	tests := []struct {
		name        string
		key         string
		value       []byte
		wantVersion uint64 // on a map that already holds "a" at version 2
		wantErr     error
		wantIs      error
	}{
		{name: "new key", key: "b", value: []byte("x"), wantVersion: 1},
		{name: "existing key counts puts", key: "a", value: []byte("y"), wantVersion: 3},
		{name: "empty value", key: "b", value: nil, wantVersion: 1},
		{name: "key of 256 bytes", key: key256, value: []byte("x"), wantVersion: 1},
		{name: "value of exactly 1 MiB", key: "b", value: mib, wantVersion: 1},
		{name: "empty key", key: "", value: []byte("x"), wantErr: workload.ErrInvalid, wantIs: workload.ErrEmptyKey},
		{name: "key of 257 bytes", key: key257, value: []byte("x"), wantErr: workload.ErrInvalid, wantIs: workload.ErrKeyTooLong},
		{name: "key of 258 bytes in 86 runes", key: multibyte, value: []byte("x"), wantErr: workload.ErrInvalid, wantIs: workload.ErrKeyTooLong},
		{name: "value of 1 MiB + 1", key: "a", value: mibPlus1, wantErr: workload.ErrInvalid, wantIs: workload.ErrValueTooLarge},
		{name: "value of 1 MiB + 1 on a new key", key: "b", value: mibPlus1, wantErr: workload.ErrInvalid, wantIs: workload.ErrValueTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := workload.NewKV()
			kvPut(t, kv, "a", []byte("first"))
			kvPut(t, kv, "a", []byte("second"))
			keys := []string{"a", "b", tt.key}
			before := snapshotKV(t, kv, keys)

			r, err := kv.Apply(workload.KVCmd{Op: workload.KVPut, Key: tt.key, Value: tt.value})
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorIs(t, err, tt.wantIs)
				assert.Equal(t, before, snapshotKV(t, kv, keys), "a refused put must change nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantVersion, r.Version)
			assert.Nil(t, r.Value, "Put returns no value")

			got, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: tt.key})
			require.NoError(t, err)
			assert.Equal(t, tt.wantVersion, got.Version)
			assert.True(t, bytes.Equal(tt.value, got.Value), "Get returns what was put")
		})
	}
}

func TestKVGet(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		want    string
		version uint64
		wantErr error
		wantIs  error
	}{
		{name: "present", key: "a", want: "two", version: 2},
		{name: "missing key", key: "nope", wantErr: workload.ErrNotFound, wantIs: workload.ErrNoKey},
		{name: "empty key", key: "", wantErr: workload.ErrInvalid, wantIs: workload.ErrEmptyKey},
		{name: "key of 257 bytes", key: strings.Repeat("a", workload.MaxKeyLen+1), wantErr: workload.ErrInvalid, wantIs: workload.ErrKeyTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := workload.NewKV()
			kvPut(t, kv, "a", []byte("one"))
			kvPut(t, kv, "a", []byte("two"))
			before := snapshotKV(t, kv, []string{"a"})

			r, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: tt.key})
			assert.Equal(t, before, snapshotKV(t, kv, []string{"a"}), "Get never changes the map")
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.ErrorIs(t, err, tt.wantIs)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(r.Value))
			assert.Equal(t, tt.version, r.Version)
		})
	}
}

func TestKVVersionsArePerKey(t *testing.T) {
	kv := workload.NewKV()
	for i := 1; i <= 5; i++ {
		assert.Equal(t, uint64(i), kvPut(t, kv, "a", []byte{byte(i)}))
	}
	assert.Equal(t, uint64(1), kvPut(t, kv, "b", nil), "each key has its own version")
	assert.Equal(t, uint64(6), kvPut(t, kv, "a", nil))

	n, err := kv.Apply(workload.KVCmd{Op: workload.KVLen})
	require.NoError(t, err)
	assert.Equal(t, uint64(2), n.Version)

	_, err = kv.Apply(workload.KVCmd{Op: workload.KVReset})
	require.NoError(t, err)
	n, err = kv.Apply(workload.KVCmd{Op: workload.KVLen})
	require.NoError(t, err)
	assert.Equal(t, uint64(0), n.Version, "Reset removes every key")
	_, err = kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: "a"})
	assert.ErrorIs(t, err, workload.ErrNotFound)
	assert.Equal(t, uint64(1), kvPut(t, kv, "a", nil), "a key put after Reset starts again at version 1")
}

// The designs hand results to callers after the machine has moved on, and
// callers reuse their buffers: sharing memory either way would be a data race
// in the server.
func TestKVValuesAreCopies(t *testing.T) {
	kv := workload.NewKV()
	in := []byte("hello")
	kvPut(t, kv, "k", in)
	in[0] = 'J' // the caller reuses its buffer after Put

	r1, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: "k"})
	require.NoError(t, err)
	assert.Equal(t, "hello", string(r1.Value), "Put must keep a copy of its input")

	r1.Value[0] = 'Y' // the caller scribbles on what Get returned
	r2, err := kv.Apply(workload.KVCmd{Op: workload.KVGet, Key: "k"})
	require.NoError(t, err)
	assert.Equal(t, "hello", string(r2.Value), "Get must return a copy")
	assert.NotSame(t, &r1.Value[0], &r2.Value[0], "two Gets must not share a buffer")
}

func TestKVUnknownOp(t *testing.T) {
	kv := workload.NewKV()
	kvPut(t, kv, "a", []byte("x"))
	before := snapshotKV(t, kv, []string{"a"})
	for _, op := range []workload.KVOp{0, 99} {
		_, err := kv.Apply(workload.KVCmd{Op: op, Key: "a", Value: []byte("y")})
		assert.ErrorIs(t, err, workload.ErrInvalid)
		assert.ErrorIs(t, err, workload.ErrUnknownOp)
	}
	assert.Equal(t, before, snapshotKV(t, kv, []string{"a"}))
}

func TestKVSnapshotSeesEveryChange(t *testing.T) {
	// Guards the helper the refusal tests rely on: if snapshotKV missed a
	// change, "unchanged" would prove nothing.
	kv := workload.NewKV()
	kvPut(t, kv, "a", []byte("x"))
	keys := []string{"a", "b"}
	s0 := snapshotKV(t, kv, keys)
	kvPut(t, kv, "a", []byte("x"))
	s1 := snapshotKV(t, kv, keys)
	assert.NotEqual(t, s0, s1, "a version change must show")
	kvPut(t, kv, "a", []byte("y"))
	s2 := snapshotKV(t, kv, keys)
	assert.NotEqual(t, s1, s2, "a value change must show")
	kvPut(t, kv, "b", nil)
	assert.NotEqual(t, s2, snapshotKV(t, kv, keys), "a new key must show")
}
