package store

import "time"

// WithSpin is withSpin for the benchmarks of package store_test, which go
// through storetest (an import package store's own tests cannot make).
func WithSpin[C, R any](m Machine[C, R], d time.Duration) Machine[C, R] { return withSpin(m, d) }
