package workload

import (
	"errors"
	"fmt"
)

// The kinds of refusal. Every error a machine returns wraps exactly one.
var (
	// ErrInvalid: the command is malformed whatever the state.
	ErrInvalid = errors.New("workload: invalid argument")
	// ErrNotFound: the command names an account or key that does not exist.
	ErrNotFound = errors.New("workload: not found")
	// ErrInsufficientFunds: a transfer larger than the sender's balance.
	ErrInsufficientFunds = errors.New("workload: insufficient funds")
	// ErrOverflow: the result would not fit in an int64.
	ErrOverflow = errors.New("workload: overflow")
	// ErrUnavailable: the machine's state lives elsewhere (a database) and
	// could not be reached; the command may be tried again.
	ErrUnavailable = errors.New("workload: state unavailable")
	// ErrFenced: this replica no longer owns an account the command
	// touches (another replica took it over, and the database refused the
	// write); nothing changed, and the call may be tried again, on the
	// replica that owns the account now.
	ErrFenced = errors.New("workload: fenced: another replica owns the account")
)

// Specific refusals, built once so that refusing costs no allocation.
var (
	ErrNegativeDelta   = fmt.Errorf("%w: delta must be >= 0", ErrInvalid)
	ErrCounterOverflow = fmt.Errorf("%w: counter would exceed the int64 range", ErrOverflow)
	ErrAmount          = fmt.Errorf("%w: amount must be > 0", ErrInvalid)
	ErrSameAccount     = fmt.Errorf("%w: from and to accounts must differ", ErrInvalid)
	ErrHistoryLimit    = fmt.Errorf("%w: history limit must be <= %d", ErrInvalid, MaxHistoryLimit)
	ErrNoAccount       = fmt.Errorf("%w: account does not exist", ErrNotFound)
	ErrAccounts        = fmt.Errorf("%w: accounts must be in 1..%d", ErrInvalid, MaxAccounts)
	ErrInitialBalance  = fmt.Errorf("%w: initial balance must be >= 0 and the total must fit in an int64", ErrInvalid)
	ErrScenario        = fmt.Errorf("%w: unknown scenario", ErrInvalid)
	ErrEmptyKey        = fmt.Errorf("%w: key must not be empty", ErrInvalid)
	ErrKeyTooLong      = fmt.Errorf("%w: key must be at most %d bytes", ErrInvalid, MaxKeyLen)
	ErrValueTooLarge   = fmt.Errorf("%w: value must be at most %d bytes", ErrInvalid, MaxValueLen)
	ErrNoKey           = fmt.Errorf("%w: key does not exist", ErrNotFound)
	ErrUnknownOp       = fmt.Errorf("%w: unknown operation", ErrInvalid)
)
