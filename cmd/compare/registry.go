package main

import (
	"fmt"

	"github.com/locklab/locklab/server"
)

// The runner asks the one list of modes (server.Modes, derived from the store
// design registry) what a mode can do; it keeps no list of its own.

// NA is a cell of the grid that has no runs because the mode cannot serve it:
// the report shows it as n/a with the reason, never as an error or a zero.
type NA struct {
	Workload   string `json:"workload"`
	Mode       string `json:"mode"`
	Durability string `json:"durability,omitempty"` // set when the durability is what the mode cannot do
	Reason     string `json:"reason"`
}

// unservable says why a mode cannot run a workload under a durability, or
// "" when it can.
func unservable(mode string, wl Workload, durability string) string {
	m, err := server.LookupMode(mode)
	if err != nil {
		return "" // preflight reports unknown modes
	}
	if !m.Serves(wl.Kind) {
		return fmt.Sprintf("%s does not serve the %s workload", mode, wl.Kind)
	}
	if d, ok := m.Design(); durability == durabilityWAL && (!ok || !d.Durable) {
		return fmt.Sprintf("%s cannot run with a write-ahead log", mode)
	}
	return ""
}

// allModes is every server mode, in the registry's order: -modes all.
func allModes() []string {
	var names []string
	for _, m := range server.Modes() {
		names = append(names, m.Name)
	}
	return names
}

// naCells lists the cells of the grid no mode can fill, one per workload,
// mode and (where it matters) durability.
func naCells(cfg Config) []NA {
	var out []NA
	for _, wl := range cfg.Workloads {
		for _, mode := range cfg.Modes {
			if why := unservable(mode, wl, durabilityNone); why != "" {
				out = append(out, NA{Workload: wl.Name, Mode: mode, Reason: why})
				continue
			}
			for _, d := range cfg.Factors.Durabilities {
				if why := unservable(mode, wl, d); why != "" {
					out = append(out, NA{Workload: wl.Name, Mode: mode, Durability: d, Reason: why})
				}
			}
		}
	}
	return out
}

// naFor finds the n/a entry of a cell, if it has one.
func naFor(cells []NA, workload, mode, durability string) (NA, bool) {
	for _, c := range cells {
		if c.Workload == workload && c.Mode == mode && (c.Durability == "" || c.Durability == durability) {
			return c, true
		}
	}
	return NA{}, false
}
