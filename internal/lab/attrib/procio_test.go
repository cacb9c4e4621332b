package attrib

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// procIO is /proc/PID/io as Linux prints it.
const procIO = `rchar: 123456
wchar: 654321
syscr: 1200
syscw: 3400
read_bytes: 0
write_bytes: 4096
cancelled_write_bytes: 0
`

func TestParseIO(t *testing.T) {
	got, err := parseIO(strings.NewReader(procIO))
	require.NoError(t, err)
	assert.Equal(t, IO{Reads: 1200, Writes: 3400}, got)

	bad := []struct{ name, text, message string }{
		{"no syscw", "syscr: 1\n", "syscw"},
		{"no syscr", "syscw: 1\n", "syscr"},
		{"empty", "", "syscr"},
		{"not a number", "syscr: many\nsyscw: 1\n", `syscr: "many"`},
		{"negative", "syscr: 1\nsyscw: -2\n", "syscw"},
		{"not key: value", "syscr 1\nsyscw: 1\n", "key: value"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseIO(strings.NewReader(tt.text))
			assert.ErrorContains(t, err, tt.message)
		})
	}
}

func TestIOPerCall(t *testing.T) {
	before, after := IO{Reads: 10, Writes: 100}, IO{Reads: 30, Writes: 400}
	reads, writes, err := after.PerCall(before, 100)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, reads, 1e-12)
	assert.InDelta(t, 3.0, writes, 1e-12)

	_, _, err = after.PerCall(before, 0)
	assert.ErrorContains(t, err, "calls")
	_, _, err = before.PerCall(after, 100)
	assert.ErrorContains(t, err, "backwards")
}
