package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Factors are the knobs under which the designs diverge (DESIGN.md §9), one
// value of each. Every run has one Factors; it is part of every group key,
// of every report heading and of meta.json.
type Factors struct {
	Work       time.Duration `json:"work"`       // server -work: CPU work inside every state-changing Apply
	Durability string        `json:"durability"` // server -durability: none or wal
	Skew       float64       `json:"skew"`       // drivers: Zipf θ of account and key choice; 0 uniform
	ReadRatio  float64       `json:"read_ratio"` // drivers: share of reads; -1 the workload's default mix
}

// The default of each factor: what the server and the drivers do unasked.
const (
	durabilityNone   = "none"
	durabilityWAL    = "wal"
	defaultReadRatio = -1
)

// durabilities are the accepted -durability values.
var durabilities = []string{durabilityNone, durabilityWAL}

// FactorSpace is every value of every factor the comparison sweeps.
type FactorSpace struct {
	Works        []time.Duration `json:"work"`
	Durabilities []string        `json:"durability"`
	Skews        []float64       `json:"skew"`
	ReadRatios   []float64       `json:"read_ratio"`
}

// combos is the cross product, work outermost.
func (fs FactorSpace) combos() []Factors {
	var out []Factors
	for _, w := range fs.Works {
		for _, d := range fs.Durabilities {
			for _, s := range fs.Skews {
				for _, r := range fs.ReadRatios {
					out = append(out, Factors{Work: w, Durability: d, Skew: s, ReadRatio: r})
				}
			}
		}
	}
	return out
}

// forWorkload sets the factors a workload ignores to their defaults: the
// counter has no keys to skew and no reads in its mix, so sweeping skew or
// read ratio over it would only repeat the same runs.
func (f Factors) forWorkload(kind string) Factors {
	if kind == "counter" {
		f.Skew, f.ReadRatio = 0, defaultReadRatio
	}
	return f
}

// Key identifies the combination in group keys and figures.json.
func (f Factors) Key() string {
	return fmt.Sprintf("work=%s durability=%s skew=%s read-ratio=%s", f.Work, f.Durability, fmtFloat(f.Skew), f.readRatioString())
}

// String is the combination as the report's headings print it.
func (f Factors) String() string {
	return fmt.Sprintf("work %s, durability %s, skew %s, read ratio %s", f.Work, f.Durability, fmtFloat(f.Skew), f.readRatioString())
}

// idSuffix names the combination in run ids and file names: empty for the
// defaults, so default runs keep short names; only [a-z0-9.-].
func (f Factors) idSuffix() string {
	var b strings.Builder
	if f.Work > 0 {
		b.WriteString("-w" + strings.ReplaceAll(f.Work.String(), "µ", "u"))
	}
	if f.Durability != durabilityNone && f.Durability != "" {
		b.WriteString("-" + f.Durability)
	}
	if f.Skew != 0 {
		b.WriteString("-skew" + fmtFloat(f.Skew))
	}
	if f.ReadRatio != defaultReadRatio {
		b.WriteString("-read" + fmtFloat(f.ReadRatio))
	}
	return b.String()
}

func (f Factors) readRatioString() string {
	if f.ReadRatio == defaultReadRatio {
		return "default"
	}
	return fmtFloat(f.ReadRatio)
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// parseFactors reads the four factor flags, each a comma list.
func parseFactors(work, durability, skew, readRatio string) (FactorSpace, error) {
	var fs FactorSpace
	items, err := parseList(work, "-work")
	if err != nil {
		return fs, err
	}
	for _, it := range items {
		d, err := time.ParseDuration(it)
		if it == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 || d > time.Second {
			return fs, fmt.Errorf("-work: %q is not a duration in 0..1s (e.g. 10us)", it)
		}
		fs.Works = append(fs.Works, d)
	}
	if fs.Durabilities, err = parseList(durability, "-durability"); err != nil {
		return fs, err
	}
	for _, d := range fs.Durabilities {
		if !slices.Contains(durabilities, d) {
			return fs, fmt.Errorf("-durability: %q: want %s", d, strings.Join(durabilities, " or "))
		}
	}
	if fs.Skews, err = parseFloats(skew, "-skew", 0, 1, false); err != nil {
		return fs, err
	}
	if slices.Contains(fs.Skews, 1) {
		return fs, fmt.Errorf("-skew: θ = 1 is not a Zipf distribution the drivers draw; want 0 ≤ θ < 1")
	}
	if fs.ReadRatios, err = parseFloats(readRatio, "-read-ratio", 0, 1, true); err != nil {
		return fs, err
	}
	return fs, nil
}

// parseFloats reads a comma list of numbers in lo..hi; "default" stands for
// defaultReadRatio where allowed.
func parseFloats(s, flagName string, lo, hi float64, withDefault bool) ([]float64, error) {
	items, err := parseList(s, flagName)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, it := range items {
		if withDefault && (it == "default" || it == "-1") {
			out = append(out, defaultReadRatio)
			continue
		}
		v, err := strconv.ParseFloat(it, 64)
		if err != nil || v < lo || v > hi {
			want := fmt.Sprintf("a number in %g..%g", lo, hi)
			if withDefault {
				want += " or default"
			}
			return nil, fmt.Errorf("%s: %q is not %s", flagName, it, want)
		}
		out = append(out, v)
	}
	return out, nil
}
