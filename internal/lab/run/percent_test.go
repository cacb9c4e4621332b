package run

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -max-foreign is read once, from the flag's text to a fraction; its
// default is the lab's rule, and a bad share is refused with a message,
// leaving the share as it was.
func TestMaxForeignFlag(t *testing.T) {
	parse := func(args ...string) (float64, error) {
		fs := flag.NewFlagSet("compare", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		share := DefaultMaxForeign
		fs.Var(MaxForeignFlag(&share), "max-foreign", "")
		err := fs.Parse(args)
		return share, err
	}
	tests := []struct {
		args    []string
		want    float64
		wantErr string
	}{
		{nil, DefaultMaxForeign, ""},
		{[]string{"-max-foreign", "5"}, 0.05, ""},
		{[]string{"-max-foreign", " 12.5% "}, 0.125, ""},
		{[]string{"-max-foreign", "100%"}, 1, ""},
		{[]string{"-max-foreign", "lots"}, DefaultMaxForeign, `-max-foreign "lots": want a percentage`},
		{[]string{"-max-foreign", "150%"}, DefaultMaxForeign, `-max-foreign "150%": want 0% to 100%`},
		{[]string{"-max-foreign", "0"}, DefaultMaxForeign, "-max-foreign 0%: every run would be spoiled"},
	}
	for _, tt := range tests {
		got, err := parse(tt.args...)
		if tt.wantErr != "" {
			require.Error(t, err, tt.args)
			assert.Contains(t, err.Error(), tt.wantErr)
		} else {
			require.NoError(t, err, tt.args)
		}
		assert.InDelta(t, tt.want, got, 1e-12, tt.args)
	}
	assert.Equal(t, "10%", MaxForeignFlag(new(DefaultMaxForeign)).String(), "-h shows the default as a percentage")
}
