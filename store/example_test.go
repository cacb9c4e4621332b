package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/store"
)

// vote is a command for tally: a value, not a closure, so every design takes
// it the same way and nothing is allocated to send it.
type vote struct {
	candidate string
}

var errNoCandidate = errors.New("tally: no candidate")

// tally is a user's own sequential state machine: plain Go, no locks. Apply
// returns a value, never a reference into its state.
type tally struct {
	votes map[string]int
}

func newTally() *tally { return &tally{votes: make(map[string]int)} }

func (t *tally) Apply(v vote) (int, error) {
	if v.candidate == "" {
		return 0, errNoCandidate
	}
	t.votes[v.candidate]++
	return t.votes[v.candidate], nil
}

// Wrap a state machine with a mutex and call it from many goroutines.
func ExampleNewMutex() {
	s := store.NewMutex(newTally())
	defer s.Close()

	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if _, err := s.Do(context.Background(), vote{candidate: "ada"}); err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()

	n, err := s.Do(context.Background(), vote{candidate: "ada"})
	fmt.Println(n, err)
	// Output: 101 <nil>
}

// Give a state machine to an owner goroutine; Close stops it.
func ExampleNewInputQ() {
	s := store.NewInputQ(newTally(), store.WithQueueSize(64))

	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if _, err := s.Do(context.Background(), vote{"grace"}); err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()

	n, err := s.Do(context.Background(), vote{"grace"})
	fmt.Println(n, err)

	// The machine's own errors come back unchanged.
	_, err = s.Do(context.Background(), vote{})
	fmt.Println(errors.Is(err, errNoCandidate))

	// Close waits for the owner goroutine to exit; after it, Do is refused.
	s.Close()
	_, err = s.Do(context.Background(), vote{"grace"})
	fmt.Println(errors.Is(err, store.ErrClosed))
	// Output:
	// 101 <nil>
	// true
	// true
}

// Code written against store.Store switches design by changing one name.
// A design that needs a capability the machine lacks is refused with
// ErrUnsupported.
func Example() {
	for _, name := range []string{"mutex", "inputQ", "combining", "rwmutex"} {
		s, err := store.New(name, newTally(), store.Config{})
		if errors.Is(err, store.ErrUnsupported) {
			fmt.Println(name, "refused:", err)
			continue
		}
		s.Do(context.Background(), vote{candidate: "ada"})
		n, _ := s.Do(context.Background(), vote{candidate: "ada"})
		s.Close()
		fmt.Println(name, n)
	}
	// Output:
	// mutex 2
	// inputQ 2
	// combining 2
	// rwmutex refused: store: design does not support this machine: rwmutex needs a machine with reads
}

// readTally is a tally that says which commands only read, so that the
// rwmutex design can let them share the lock.
type readTally struct{ *tally }

// ReadOnly: every vote counts, so none only reads; a query command would.
func (readTally) ReadOnly(vote) bool { return false }

func ExampleNew_rwmutex() {
	s, _ := store.New[vote, int]("rwmutex", readTally{newTally()}, store.Config{})
	defer s.Close()
	s.Do(context.Background(), vote{candidate: "ada"})
	n, _ := s.Do(context.Background(), vote{candidate: "ada"})
	fmt.Println(n)
	// Output: 2
}

func ExampleNew_inputQBatch() {
	s, _ := store.New[vote, int]("inputQ-batch", newTally(), store.Config{BatchLimit: 16})
	defer s.Close()
	n, _ := s.Do(context.Background(), vote{candidate: "ada"})
	fmt.Println(n)
	// Output: 1
}

func ExampleNew_combining() {
	s, _ := store.New[vote, int]("combining", newTally(), store.Config{})
	defer s.Close()
	n, _ := s.Do(context.Background(), vote{candidate: "ada"})
	fmt.Println(n)
	// Output: 1
}

// shardedTally splits the votes by candidate: a vote touches one shard, so
// votes for different candidates can be counted at once.
type shardedTally struct {
	shards []map[string]int
}

func (t *shardedTally) SetShards(n int) {
	t.shards = make([]map[string]int, n)
	for i := range t.shards {
		t.shards[i] = map[string]int{}
	}
}

func (t *shardedTally) ShardsOf(v vote) (int, int) {
	s := len(v.candidate) % len(t.shards)
	return s, s
}

func (t *shardedTally) Apply(v vote) (int, error) {
	if v.candidate == "" {
		return 0, errNoCandidate
	}
	a, _ := t.ShardsOf(v)
	t.shards[a][v.candidate]++
	return t.shards[a][v.candidate], nil
}

func ExampleNew_sharded() {
	s, _ := store.New[vote, int]("sharded", &shardedTally{}, store.Config{Shards: 4})
	defer s.Close()
	s.Do(context.Background(), vote{candidate: "ada"})
	n, _ := s.Do(context.Background(), vote{candidate: "ada"})
	fmt.Println(n)
	// Output: 2
}

func ExampleNew_shardedInputQ() {
	s, _ := store.New[vote, int]("sharded-inputQ", &shardedTally{}, store.Config{Shards: 4})
	defer s.Close()
	n, _ := s.Do(context.Background(), vote{candidate: "grace"})
	fmt.Println(n)
	// Output: 1
}

// hits is a counter with a lock-free Apply: the atomic design calls it from
// every caller at once.
type hits struct{ n atomic.Int64 }

func (h *hits) Apply(add int64) (int64, error)       { return h.n.Add(add), nil }
func (h *hits) ApplyAtomic(add int64) (int64, error) { return h.n.Add(add), nil }

func ExampleNew_atomic() {
	s, _ := store.New[int64, int64]("atomic", &hits{}, store.Config{})
	defer s.Close()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { s.Do(context.Background(), 1) })
	}
	wg.Wait()
	n, _ := s.Do(context.Background(), 0)
	fmt.Println(n)
	// Output: 10
}
