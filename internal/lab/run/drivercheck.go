package run

// checker is a driver that can tell, before any run, that its binary will
// not do (ghz: another version than the pinned one).
type checker interface {
	Check(cfg Config) error
}

// checkDrivers runs the checks of the drivers the comparison uses.
func checkDrivers(cfg Config) error {
	for _, name := range cfg.Drivers {
		if d, ok := LookupDriver(name); ok {
			if c, ok := d.(checker); ok {
				if err := c.Check(cfg); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
