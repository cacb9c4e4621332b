package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Factor is one knob under which the designs may diverge, swept by the
// comparison: one row of Factors. Values travel as canonical text (what
// Parse returns); Encode and Decode give their form in meta.json, in the run
// records and in figures.json.
type Factor struct {
	Name    string // the flag without its dash, and the factor's name in group keys: "read-ratio"
	JSON    string // its key in meta.json, the records and figures.json: "read_ratio"
	Label   string // as the report's headings name it: "read ratio"
	Default string // the flag's default: what the server and the drivers do unasked
	Usage   string // the flag's help, after "factor: "

	// Parse reads one item of the flag's comma list into canonical text,
	// or says why it is not a value of the factor, naming the flag.
	Parse func(item string) (string, error)
	// Encode is a value's JSON form; Decode reads it back (canonical text).
	Encode func(v string) any
	Decode func(raw json.RawMessage) (string, error)
	// Applies says whether the factor changes runs of a workload kind;
	// where it does not, runs take the default, so that sweeping it does
	// not repeat the same runs. nil: every workload.
	Applies func(kind string) bool
	// ID is the value's part of a run id and of its files' names, only
	// [a-z0-9.-]; "" keeps default runs' names short.
	ID func(v string) string

	// What a run with value v adds to each program's command line or
	// environment; nil adds nothing. The server's arguments also decide
	// which modes can run with v: the runner asks the server for
	// -list-modes under them, and cells whose mode it leaves out are n/a,
	// with Refusal's reason.
	Server func(v string, dirs RunDirs) []string
	Go     func(v string) []string // cmd/load's flags
	K6     func(v string) []string // the k6 scripts' -e NAME=value entries
	H2load func(v string) []string // h2load's flags
	// Place moves the server's and the driver's CPU sets (and so their
	// GOMAXPROCS) for a run with value v; nil leaves them.
	Place func(v string, p *Placement)
	// Refusal says why mode cannot run with v; nil: a generic sentence.
	Refusal func(mode, v string) string

	// Arm: the factor's values run beside the modes, in every cell of a
	// block, in the block's drawn order (Layout), rather than in cells of
	// their own, so that the report can pair each mode's runs across the
	// values block by block as it pairs the modes. A factor whose values
	// are builds of the server, not conditions of its load, is one.
	Arm bool
	// OmitDefault leaves the factor out of group keys, headings, the plan's
	// summary and the JSON wherever it is at its default: a factor few
	// comparisons sweep, whose absence says "the default", so that reports
	// written before it existed read as they did.
	OmitDefault bool
}

// RunDirs are the directories a run gives its server.
type RunDirs struct {
	Data string // a fresh, empty directory for the server's files (the write-ahead log)
}

// Placement is the CPUs of the server and of the driver; empty: unpinned.
type Placement struct {
	Server, Driver []int
	// Shared: the driver runs on (some of) the server's CPUs, as
	// -share-cpus allows where the server leaves it none of its own.
	Shared bool
}

// Factors is the table of factors, in the order of group keys, headings and
// run ids: work outermost in the cross product, then where the bank's state
// lives, its database pool and its cache (backend.go), the server's CPUs (cpus.go),
// then the latency ledger (ledger.go), and attribution innermost
// (attribute.go); the call work (callwork.go) and the Go runtime
// (runtime.go) are arms, laid out beside the modes.
var Factors = []*Factor{
	{
		Name: "work", JSON: "work", Label: "work", Default: "0",
		Usage: "comma-separated CPU work inside every state-changing Apply (server -work), e.g. 0,10us,50us",
		Parse: func(it string) (string, error) {
			d, err := durationItem(it, "-work", time.Second, "10us")
			if err != nil {
				return "", err
			}
			return d.String(), nil
		},
		Encode: encodeDuration,
		Decode: decodeDuration(time.Duration.String),
		ID:     func(v string) string { return "-w" + strings.ReplaceAll(v, "µ", "u") },
		Server: func(v string, _ RunDirs) []string { return []string{"-work", v} },
	},
	{
		Name: "durability", JSON: "durability", Label: "durability", Default: "none",
		Usage: "comma-separated durability: none, wal (server -durability, a fresh -data-dir per run)",
		Parse: func(it string) (string, error) {
			if !slices.Contains(durabilities, it) {
				return "", fmt.Errorf("-durability: %q: want %s", it, strings.Join(durabilities, " or "))
			}
			return it, nil
		},
		Encode: func(v string) any { return v },
		Decode: decodeString,
		ID:     func(v string) string { return "-" + v },
		Server: func(v string, dirs RunDirs) []string { return []string{"-durability", v, "-data-dir", dirs.Data} },
		Refusal: func(mode, _ string) string {
			return mode + " cannot run with a write-ahead log"
		},
	},
	{
		Name: "skew", JSON: "skew", Label: "skew", Default: "0",
		Usage: "comma-separated Zipf θ of account and key choice (0 uniform)",
		Parse: func(it string) (string, error) {
			v, err := parseUnit(it, "-skew", false)
			if err == nil && v == "1" {
				err = fmt.Errorf("-skew: θ = 1 is not a Zipf distribution the drivers draw; want 0 ≤ θ < 1")
			}
			return v, err
		},
		Encode:  encodeFloat,
		Decode:  decodeFloat,
		Applies: hasKeys,
		ID:      func(v string) string { return "-skew" + v },
		Go:      func(v string) []string { return []string{"-skew", v} },
		K6:      func(v string) []string { return []string{"SKEW=" + v} },
	},
	{
		Name: "read-ratio", JSON: "read_ratio", Label: "read ratio", Default: "default",
		Usage: "comma-separated share of reads in the bank and kv mixes, 0..1, or default",
		Parse: func(it string) (string, error) { return parseUnit(it, "-read-ratio", true) },
		Encode: func(v string) any {
			if v == defaultMix {
				return float64(-1)
			}
			return encodeFloat(v)
		},
		Decode: func(raw json.RawMessage) (string, error) {
			v, err := decodeFloat(raw)
			if v == "-1" {
				v = defaultMix
			}
			return v, err
		},
		Applies: hasKeys,
		ID:      func(v string) string { return "-read" + v },
		Go: func(v string) []string {
			if v == defaultMix {
				v = "-1" // cmd/load's "the workload's own mix"
			}
			return []string{"-read-ratio", v}
		},
		K6: func(v string) []string { return []string{"READ_RATIO=" + v} },
	},
	backendFactor,
	dbPoolFactor,
	cacheFactor,
	serverCPUsFactor,
	ledgerFactor,
	attributeFactor,
	callWorkFactor,
	runtimeFactor,
}

// durationItem reads one item of a duration factor's comma list: a
// duration from 0 to most, or says why not, naming the flag.
func durationItem(it, flag string, most time.Duration, example string) (time.Duration, error) {
	d, err := time.ParseDuration(it)
	if it == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > most {
		return 0, fmt.Errorf("%s: %q is not a duration in 0..%v (e.g. %s)", flag, it, most, example)
	}
	return d, nil
}

// encodeDuration is a duration factor's JSON form: nanoseconds.
func encodeDuration(v string) any { d, _ := time.ParseDuration(v); return int64(d) }

// decodeDuration reads a duration factor's nanoseconds back into its
// canonical text.
func decodeDuration(text func(time.Duration) string) func(json.RawMessage) (string, error) {
	return func(raw json.RawMessage) (string, error) {
		var ns int64
		err := json.Unmarshal(raw, &ns)
		return text(time.Duration(ns)), err
	}
}

// durabilities are the accepted -durability values.
var durabilities = []string{"none", "wal"}

// defaultMix is the read ratio that keeps each workload's own mix.
const defaultMix = "default"

// hasKeys: the workload's row of workloads.json says its calls draw keys
// (the counter's have no keys to skew and no reads in its mix).
func hasKeys(kind string) bool {
	r, _ := definitions().Row(kind)
	return r.Keyed
}

// parseUnit reads a number in 0..1, or "default" (also "-1") where allowed.
func parseUnit(it, flagName string, withDefault bool) (string, error) {
	if withDefault && (it == defaultMix || it == "-1") {
		return defaultMix, nil
	}
	v, err := strconv.ParseFloat(it, 64)
	if err != nil || !(v >= 0 && v <= 1) { // NaN too
		want := "a number in 0..1"
		if withDefault {
			want += " or default"
		}
		return "", fmt.Errorf("%s: %q is not %s", flagName, it, want)
	}
	return FormatFloat(v), nil
}

func encodeFloat(v string) any {
	f, _ := strconv.ParseFloat(v, 64) // canonical: Parse gave it
	return f
}

func decodeFloat(raw json.RawMessage) (string, error) {
	var f float64
	err := json.Unmarshal(raw, &f)
	return FormatFloat(f), err
}

func decodeString(raw json.RawMessage) (string, error) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// lookupFactor is a factor's row and its index in the table.
func lookupFactor(name string) (*Factor, int) {
	for i, f := range Factors {
		if f.Name == name {
			return f, i
		}
	}
	return nil, -1
}

// canonicalDefault is the factor's default as Parse gives it.
func (f *Factor) canonicalDefault() string {
	v, err := f.Parse(f.Default)
	if err != nil {
		panic(fmt.Sprintf("plan: factor %s: default %q: %v", f.Name, f.Default, err))
	}
	return v
}

// omitted says whether v is left out of keys, headings and JSON.
func (f *Factor) omitted(v string) bool { return f.OmitDefault && v == f.canonicalDefault() }

// refusal is why mode cannot run with v.
func (f *Factor) refusal(mode, v string) string {
	if f.Refusal != nil {
		return f.Refusal(mode, v)
	}
	return fmt.Sprintf("%s cannot run with %s %s", mode, f.Label, v)
}

// ParseSpace reads every factor's flag value (a comma list each, by factor
// name; a missing one is the default) into the values the comparison sweeps.
func ParseSpace(flags map[string]string) (Space, error) {
	sp := make(Space, len(Factors))
	for i, f := range Factors {
		s, ok := flags[f.Name]
		if !ok {
			s = f.Default
		}
		items, err := ParseList(s, "-"+f.Name)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			v, err := f.Parse(it)
			if err != nil {
				return nil, err
			}
			if slices.Contains(sp[i], v) { // two spellings of one value: "2" and "0-1"
				return nil, fmt.Errorf("-%s %q: %q is %s again", f.Name, s, it, v)
			}
			sp[i] = append(sp[i], v)
		}
	}
	if err := checkCache(sp); err != nil {
		return nil, err
	}
	return sp, nil
}
