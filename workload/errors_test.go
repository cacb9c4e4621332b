package workload_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/workload"
)

// The server maps an error to a status code by its kind, so every specific
// error must wrap exactly one kind: two would make the mapping depend on the
// order of its checks, none would make it a server bug.
func TestErrorsWrapExactlyOneKind(t *testing.T) {
	kinds := []error{workload.ErrInvalid, workload.ErrNotFound, workload.ErrInsufficientFunds, workload.ErrOverflow}
	tests := []struct {
		err  error
		kind error
	}{
		{workload.ErrNegativeDelta, workload.ErrInvalid},
		{workload.ErrCounterOverflow, workload.ErrOverflow},
		{workload.ErrAmount, workload.ErrInvalid},
		{workload.ErrSameAccount, workload.ErrInvalid},
		{workload.ErrHistoryLimit, workload.ErrInvalid},
		{workload.ErrNoAccount, workload.ErrNotFound},
		{workload.ErrAccounts, workload.ErrInvalid},
		{workload.ErrInitialBalance, workload.ErrInvalid},
		{workload.ErrScenario, workload.ErrInvalid},
		{workload.ErrEmptyKey, workload.ErrInvalid},
		{workload.ErrKeyTooLong, workload.ErrInvalid},
		{workload.ErrValueTooLarge, workload.ErrInvalid},
		{workload.ErrNoKey, workload.ErrNotFound},
		{workload.ErrUnknownOp, workload.ErrInvalid},
		// ErrInsufficientFunds is itself the specific error and its kind.
		{workload.ErrInsufficientFunds, workload.ErrInsufficientFunds},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			for _, k := range kinds {
				assert.Equal(t, k == tt.kind, errors.Is(tt.err, k), "errors.Is(%q, %q)", tt.err, k)
			}
		})
	}
}
