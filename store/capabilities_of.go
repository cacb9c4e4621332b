package store

// CapabilitiesOf reports the capabilities m really has: what it says if it
// is a CapabilityReporter (a decorator has every capability method, whatever
// it wraps), else which capability interfaces it implements.
func CapabilitiesOf[C, R any](m Machine[C, R]) Capability {
	if r, ok := m.(CapabilityReporter); ok {
		return r.Capabilities()
	}
	var c Capability
	if _, ok := m.(ReadOnly[C]); ok {
		c |= CapReads
	}
	if _, ok := m.(Sharded[C]); ok {
		c |= CapShards
	}
	if _, ok := m.(Atomic[C, R]); ok {
		c |= CapAtomic
	}
	return c
}
