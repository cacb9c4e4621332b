package wal_test

import (
	"fmt"
	"log"
	"os"

	"github.com/locklab/locklab/server/internal/wal"
)

// A log records a running sum's increments; reopened, it gives them back.
func Example() {
	dir, err := os.MkdirTemp("", "wal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	sum := 0
	replay := func(rec []byte) error { sum += int(rec[0]); return nil }
	restore := func(state []byte) error { sum = int(state[0]); return nil }

	l, _, err := wal.Open(dir, wal.Options{}, restore, replay)
	if err != nil {
		log.Fatal(err)
	}
	for _, inc := range []byte{1, 2, 3} {
		sum += int(inc)
		l.Append([]byte{inc}) // buffered...
	}
	if err := l.Sync(); err != nil { // ...and durable: one write, one fdatasync
		log.Fatal(err)
	}
	if err := l.Snapshot([]byte{byte(sum)}); err != nil { // the state so far; older segments go
		log.Fatal(err)
	}
	l.Append([]byte{4})
	sum += 4
	if err := l.Close(); err != nil {
		log.Fatal(err)
	}

	sum = 0
	l, info, err := wal.Open(dir, wal.Options{}, restore, replay)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	fmt.Println("sum", sum, "records replayed after the snapshot:", info.Records)
	// Output: sum 10 records replayed after the snapshot: 1
}
