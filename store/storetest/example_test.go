package storetest_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/storetest"
)

// tally is a user's own sequential state machine: plain Go, no locks.
type tally struct{ votes map[string]int }

type vote struct{ name string } // a command is a value

func (t *tally) Apply(v vote) (int, error) {
	if v.name == "" {
		return 0, errors.New("tally: no name")
	}
	t.votes[v.name]++
	return t.votes[v.name], nil
}

func newTally() store.Machine[vote, int] { return &tally{votes: map[string]int{}} }

func genVote(r *rand.Rand) vote { return vote{[]string{"ada", "grace", ""}[r.IntN(3)]} }

// Check and benchmark a machine of one's own under every design. In a test
// file it is one line each:
//
//	func TestTally(t *testing.T)      { storetest.Check(t, newTally, genVote) }
//	func BenchmarkTally(b *testing.B) { storetest.Benchmark(b, newTally, genVote) }
//
// Here Verify runs Check's checks without a *testing.T, and the benchmark
// runs through testing.Benchmark, so that the example runs.
func Example() {
	err := storetest.Verify(newTally, genVote, storetest.Seed(1))
	fmt.Println("checked:", err)

	res := testing.Benchmark(func(b *testing.B) {
		storetest.Benchmark(b, newTally, genVote, storetest.Designs("mutex", "inputQ"), storetest.Pars(1))
	})
	fmt.Println("benchmarked:", res.N > 0)
	// Output:
	// checked: <nil>
	// benchmarked: true
}

// A design of one's own goes through the same checks beside the registry's.
func ExampleStore() {
	mine := func(m store.Machine[vote, int]) (store.Store[vote, int], error) {
		return store.NewMutex(m), nil // a wrapper of one's own would go here
	}
	err := storetest.Verify(newTally, genVote, storetest.Designs("mutex"), storetest.Store("mine", mine), storetest.Seed(1))
	fmt.Println(err)
	// Output: <nil>
}
