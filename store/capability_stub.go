package store

import "errors"

// TEMPORARY (branch wal): the names PLAN.md gives for the registry's
// capabilities, so the decorators compile before the lead's store lands on
// main. Deleted when main is merged.

type Capability uint8

const (
	CapReads Capability = 1 << iota
	CapShards
	CapAtomic
)

type ReadOnly[C any] interface{ ReadOnly(cmd C) bool }

type Sharded[C any] interface {
	SetShards(n int)
	ShardsOf(cmd C) (a, b int)
}

type Atomic[C, R any] interface{ ApplyAtomic(cmd C) (R, error) }

type Committer interface{ Commit() error }

type CapabilityReporter interface{ Capabilities() Capability }

var ErrUnsupported = errors.New("store: design does not support this machine")

type Design struct {
	Name, Doc   string
	Needs       Capability
	Owner       bool
	GroupCommit bool
	Durable     bool
}

func Designs() []Design {
	return []Design{{Name: "mutex", Durable: true}, {Name: "inputQ", Owner: true}}
}

func LookupDesign(name string) (Design, bool) {
	for _, d := range Designs() {
		if d.Name == name {
			return d, true
		}
	}
	return Design{}, false
}
