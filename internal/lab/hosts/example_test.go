package hosts_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/locklab/locklab/internal/lab/hosts"
)

// Two hosts; a command inside the first sees the host's own address on its
// end of the link.
func Example() {
	ctx := context.Background()
	set, err := hosts.Start(ctx, hosts.Options{Hosts: 2})
	if err != nil {
		log.Fatal(err) // hosts.ErrUnsupported without root or ip
	}
	defer set.Close()
	h := set.Hosts()[0]
	out, err := h.Command(ctx, "ip", "-o", "-4", "addr", "show", "dev", "eth0").Output()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(set.Hosts()), strings.Contains(string(out), " "+h.Addr.String()+"/"))
	// Output: 2 true
}
