package store

import "fmt"

// design is one concurrency design under test: every contract test,
// concurrency test, linearizability check and benchmark runs over all of them,
// so adding a design here puts it through everything.
type design[C, R any] struct {
	name string
	new  func(m Machine[C, R]) Store[C, R]
}

// designs lists the designs for machines of one type. It is a function, not a
// variable, because Go has no generic variables.
func designs[C, R any]() []design[C, R] {
	return []design[C, R]{
		{"mutex", func(m Machine[C, R]) Store[C, R] { return NewMutex(m) }},
		{"inputQ", func(m Machine[C, R]) Store[C, R] { return NewInputQ(m) }},
		// A queue of one makes callers wait for the owner almost always,
		// exercising the blocked-send paths that the default queue rarely
		// reaches.
		{"inputQ-queue1", func(m Machine[C, R]) Store[C, R] { return NewInputQ(m, WithQueueSize(1)) }},
	}
}

func designNames() []string {
	var names []string
	for _, d := range designs[int, int]() {
		names = append(names, d.name)
	}
	return names
}

func designByName[C, R any](name string) func(Machine[C, R]) Store[C, R] {
	for _, d := range designs[C, R]() {
		if d.name == name {
			return d.new
		}
	}
	panic(fmt.Sprintf("no design %q", name))
}
