package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backend"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/workload"
	"github.com/locklab/locklab/workload/dbbank"
)

// TestCanServeOn: over a database a mode runs exactly when its design serves
// the bank there, as the registry says of a bank with dbbank's capabilities
// (noop keeps no state to put there); in memory, when it serves some
// workload. db-rowlock is on one side only, the sharded designs on the
// other. An unknown backend is refused by every mode.
func TestCanServeOn(t *testing.T) {
	dbCaps := store.CapabilitiesOf[workload.BankCmd, workload.BankResult](&dbbank.Bank{})
	for _, m := range Modes() {
		d, ok := m.Design()
		inDB := ok && d.Supports(dbCaps) == nil
		assert.Equal(t, inDB, m.CanServeOn(BackendMySQL, DurabilityNone) == nil, "%s over a database", m.Name)
		assert.Equal(t, inDB, m.ServesOn("bank", BackendMySQL) && ok, "%s serves the bank over a database", m.Name)
		inMemory := false
		for _, wl := range Workloads() {
			inMemory = inMemory || m.Serves(wl)
		}
		assert.Equal(t, inMemory, m.CanServeOn(BackendMemory, DurabilityNone) == nil, "%s in memory", m.Name)
		assert.Equal(t, m.CanServeOn(BackendMemory, DurabilityNone), m.CanServeOn("", DurabilityNone), "empty is memory")
		assert.ErrorContains(t, m.CanServeOn("postgres", DurabilityNone), `backend "postgres"`)
	}
	assert.Contains(t, ModesOn(BackendMySQL), "db-rowlock")
	assert.NotContains(t, ModesOn(BackendMemory), "db-rowlock")
	assert.Contains(t, ModesOn(BackendMemory), "sharded")
	assert.NotContains(t, ModesOn(BackendMySQL), "sharded")
	// Package backend declares them for those who cannot link the
	// server; the workloads with a machine over a database are the ones.
	assert.Equal(t, backend.DatabaseWorkloads(), WorkloadsOn(BackendMySQL))
	assert.Equal(t, Workloads(), WorkloadsOn(BackendMemory))
}

// TestNewOverUnservedBackend: New refuses, before any database is asked, a
// mode that cannot serve the bank over one, and a write-ahead log beside
// one; in memory, db-rowlock builds a server that serves nothing.
func TestNewOverUnservedBackend(t *testing.T) {
	unreachable := dbbank.Config{DSN: "root@unix(/nonexistent/sock)/x"}
	_, err := New(Config{Mode: "sharded", Backend: BackendMySQL, DB: unreachable})
	assert.ErrorContains(t, err, "mode sharded cannot serve the bank with its state in mysql")
	assert.NotErrorIs(t, err, ErrBackend, "refused before the database is asked")
	_, err = New(Config{Mode: "mutex", Backend: BackendMySQL, DB: unreachable, Durability: DurabilityWAL, DataDir: t.TempDir()})
	assert.ErrorContains(t, err, "takes no write-ahead log")
	_, err = New(Config{Mode: "mutex", Backend: BackendMySQL, DB: unreachable})
	require.ErrorIs(t, err, ErrBackend, "the database is asked, and does not answer")
	assert.ErrorIs(t, err, workload.ErrUnavailable)
	srv, err := New(Config{Mode: "db-rowlock"})
	require.NoError(t, err)
	srv.Stop(t.Context())
}
