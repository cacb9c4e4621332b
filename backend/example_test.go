package backend_test

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/backend"
)

// A flag's value checked against the names, as the server's -backend and
// the runner's factor of the same name do.
func Example() {
	for _, v := range []string{backend.MySQL, "postgres"} {
		fmt.Printf("-backend %s: %v\n", v, slices.Contains(backend.Names(), v))
	}
	// Output:
	// -backend mysql: true
	// -backend postgres: false
}
