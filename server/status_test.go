package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
)

// TestToStatus checks the one mapping from errors to codes
// (docs/design.md §status-codes) with every error a store or workload
// returns, wrapped or not.
func TestToStatus(t *testing.T) {
	tests := []struct {
		err  error
		want codes.Code
	}{
		{workload.ErrInvalid, codes.InvalidArgument},
		{workload.ErrNegativeDelta, codes.InvalidArgument},
		{workload.ErrAmount, codes.InvalidArgument},
		{workload.ErrSameAccount, codes.InvalidArgument},
		{workload.ErrHistoryLimit, codes.InvalidArgument},
		{workload.ErrAccounts, codes.InvalidArgument},
		{workload.ErrInitialBalance, codes.InvalidArgument},
		{workload.ErrScenario, codes.InvalidArgument},
		{workload.ErrEmptyKey, codes.InvalidArgument},
		{workload.ErrKeyTooLong, codes.InvalidArgument},
		{workload.ErrValueTooLarge, codes.InvalidArgument},
		{workload.ErrUnknownOp, codes.InvalidArgument},
		{ErrKeyHeader, codes.InvalidArgument},
		{fmt.Errorf("%w: no \"x-key\"", ErrKeyHeader), codes.InvalidArgument},
		{workload.ErrNotFound, codes.NotFound},
		{workload.ErrNoAccount, codes.NotFound},
		{workload.ErrNoKey, codes.NotFound},
		{workload.ErrInsufficientFunds, codes.FailedPrecondition},
		{workload.ErrFenced, codes.Aborted},
		{fmt.Errorf("%w: accounts 1 and 2 were taken over", workload.ErrFenced), codes.Aborted},
		{workload.ErrOverflow, codes.OutOfRange},
		{workload.ErrCounterOverflow, codes.OutOfRange},
		{store.ErrClosed, codes.Unavailable},
		{fmt.Errorf("%w: database: dial unix: connection refused", workload.ErrUnavailable), codes.Unavailable},
		{store.ErrOverloaded, codes.ResourceExhausted},
		{newInflight(3).err, codes.ResourceExhausted},
		{context.Canceled, codes.Canceled},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{fmt.Errorf("bank: transfer 3: %w", workload.ErrInsufficientFunds), codes.FailedPrecondition},
		{fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", store.ErrClosed)), codes.Unavailable},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), codes.DeadlineExceeded},
		{errors.Join(errors.New("other"), workload.ErrNoKey), codes.NotFound},
		{errors.New("disk on fire"), codes.Internal},
		{fmt.Errorf("not wrapped: %v", workload.ErrInvalid), codes.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, codeOf(tt.err))
			st, ok := status.FromError(toStatus(tt.err))
			if assert.True(t, ok, "toStatus returns a status") {
				assert.Equal(t, tt.want, st.Code())
				assert.Equal(t, tt.err.Error(), st.Message(), "the message names the broken rule")
			}
		})
	}
	assert.NoError(t, toStatus(nil), "nil stays nil")
}
