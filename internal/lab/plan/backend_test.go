package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCacheFactor: -cache is a factor of the bank over a database: its
// values reach the server's command line and the run ids, the counter
// keeps its default, and the space of the runs gives back what they took.
// A cache swept with the bank in memory, or an unknown cache, is refused.
func TestCacheFactor(t *testing.T) {
	sp, err := ParseSpace(map[string]string{Backend: "mysql", Cache: "none,redis"})
	require.NoError(t, err)
	assert.Equal(t, []string{"none", "redis"}, sp.Values(Cache))
	var ids, args []string
	for _, p := range sp.Points() {
		ids = append(ids, p.IDSuffix())
		args = append(args, strings.Join(p.ServerArgs(RunDirs{}), " "))
		assert.Equal(t, "none", p.ForWorkload("counter").Get(Cache), "the counter stays in memory, uncached")
	}
	assert.Equal(t, []string{"-mysql", "-mysql-redis"}, ids)
	assert.Equal(t, []string{"-backend mysql", "-backend mysql -cache redis"}, args)
	assert.Equal(t, sp, SpaceOf(sp.Points()), "the runs' space is the swept one")
	assert.Equal(t, DefaultSpace(), SpaceOf(nil))
	assert.NotContains(t, DefaultPoint().Key(), "cache", "at its default it names itself nowhere")

	for flags, want := range map[[2]string]string{
		{"memory", "redis"}:       "-cache redis: a cache sits in front of the bank's database; sweep it with -backend mysql alone",
		{"memory,mysql", "redis"}: "not -backend memory,mysql",
		{"mysql", "memcached"}:    `-cache: "memcached": want none or redis`,
	} {
		_, err := ParseSpace(map[string]string{Backend: flags[0], Cache: flags[1]})
		assert.ErrorContains(t, err, want, flags)
	}
	_, err = ParseSpace(map[string]string{Backend: "memory,mysql"})
	assert.NoError(t, err, "the control: no cache, both places")
}
