package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A Point is one value of every factor, in the table's order: a run's
// combination. Points are comparable, so a Point can key a map or a group.
type Point struct {
	vals string // canonical values joined by sep
}

const sep = "\x1f"

// DefaultPoint is every factor at its default: the zero Point.
func DefaultPoint() Point { return Point{} }

func defaultValues() []string {
	vals := make([]string, len(Factors))
	for i, f := range Factors {
		vals[i] = f.canonicalDefault()
	}
	return vals
}

// pointOf makes a Point; every factor at its default is the zero Point, so
// that Point{} and DefaultPoint() are equal as map keys and in sections.
func pointOf(vals []string) Point {
	for i, f := range Factors {
		if vals[i] != f.canonicalDefault() {
			return Point{vals: strings.Join(vals, sep)}
		}
	}
	return Point{}
}

func (p Point) values() []string {
	if p.vals == "" { // the zero Point; no value is empty
		return defaultValues()
	}
	return strings.Split(p.vals, sep)
}

// Get is the value of the named factor; it panics on a name not in the
// table, a programming error.
func (p Point) Get(name string) string {
	_, i := lookupFactor(name)
	if i < 0 {
		panic("plan: no factor " + name)
	}
	return p.values()[i]
}

// With is p with the named factor set to v (canonical text).
func (p Point) With(name, v string) Point {
	_, i := lookupFactor(name)
	if i < 0 {
		panic("plan: no factor " + name)
	}
	vals := p.values()
	vals[i] = v
	return pointOf(vals)
}

// ForWorkload sets the factors a workload ignores to their defaults.
func (p Point) ForWorkload(kind string) Point {
	vals := p.values()
	for i, f := range Factors {
		if f.Applies != nil && !f.Applies(kind) {
			vals[i] = f.canonicalDefault()
		}
	}
	return pointOf(vals)
}

// each calls fn with every factor and its value, in the table's order.
func (p Point) each(fn func(f *Factor, v string)) {
	for i, v := range p.values() {
		fn(Factors[i], v)
	}
}

// shown calls fn with every factor that names itself in keys, headings and
// JSON: all but those at a default they omit (Factor.OmitDefault).
func (p Point) shown(fn func(f *Factor, v string)) {
	p.each(func(f *Factor, v string) {
		if !f.omitted(v) {
			fn(f, v)
		}
	})
}

// WithoutArms is p with every arm factor (Factor.Arm) at its default: the
// cell of a block its runs share with the other arms' runs.
func (p Point) WithoutArms() Point {
	vals := p.values()
	for i, f := range Factors {
		if f.Arm {
			vals[i] = f.canonicalDefault()
		}
	}
	return pointOf(vals)
}

// Arms are p under every combination of the swept arm factors' values
// (Factor.Arm), the first value first: the points whose runs share a cell
// of a block. Without a swept arm factor, p alone.
func (sp Space) Arms(p Point) []Point {
	out := []Point{p}
	for i, f := range Factors {
		if !f.Arm || i >= len(sp) {
			continue
		}
		var next []Point
		for _, q := range out {
			for _, v := range sp[i] {
				next = append(next, q.With(f.Name, v))
			}
		}
		out = next
	}
	return out
}

// Key identifies the combination in group keys: "work=0s durability=none …".
func (p Point) Key() string {
	var parts []string
	p.shown(func(f *Factor, v string) { parts = append(parts, f.Name+"="+v) })
	return strings.Join(parts, " ")
}

// String is the combination as the report's headings print it:
// "work 0s, durability none, …".
func (p Point) String() string {
	var parts []string
	p.shown(func(f *Factor, v string) { parts = append(parts, f.Label+" "+v) })
	return strings.Join(parts, ", ")
}

// Changed names the factors not at their defaults, "backend=mysql
// db-pool=9": the combination as short as it can be said ("" at the
// defaults).
func (p Point) Changed() string {
	var parts []string
	p.each(func(f *Factor, v string) {
		if v != f.canonicalDefault() {
			parts = append(parts, f.Name+"="+v)
		}
	})
	return strings.Join(parts, " ")
}

// IDSuffix names the combination in run ids: the parts of the factors not
// at their defaults.
func (p Point) IDSuffix() string {
	var b strings.Builder
	p.each(func(f *Factor, v string) {
		if v != f.canonicalDefault() && f.ID != nil {
			b.WriteString(f.ID(v))
		}
	})
	return b.String()
}

// Args collects what the factors add for one program: the non-nil hook
// that pick returns, called on each factor's value. Defaults are passed
// too when keep says so; programs whose unasked behaviour is the default
// are not told it.
func (p Point) args(pick func(f *Factor) func(string) []string, keep func(f *Factor, v string) bool) []string {
	var out []string
	p.each(func(f *Factor, v string) {
		if h := pick(f); h != nil && keep(f, v) {
			out = append(out, h(v)...)
		}
	})
	return out
}

func notDefault(f *Factor, v string) bool { return v != f.canonicalDefault() }

// ServerArgs are the server's flags for the factors not at their defaults.
func (p Point) ServerArgs(dirs RunDirs) []string {
	return p.args(func(f *Factor) func(string) []string {
		if f.Server == nil {
			return nil
		}
		return func(v string) []string { return f.Server(v, dirs) }
	}, notDefault)
}

// GoArgs are cmd/load's flags: every factor it takes, defaults included,
// so that its own defaults cannot drift from the runner's.
func (p Point) GoArgs() []string {
	return p.args(func(f *Factor) func(string) []string { return f.Go }, func(*Factor, string) bool { return true })
}

// K6Env are the k6 scripts' -e entries for the factors not at their defaults.
func (p Point) K6Env() []string {
	return p.args(func(f *Factor) func(string) []string { return f.K6 }, notDefault)
}

// H2loadArgs are h2load's flags for the factors not at their defaults.
func (p Point) H2loadArgs() []string {
	return p.args(func(f *Factor) func(string) []string { return f.H2load }, notDefault)
}

// Place is the CPU placement of a run at p, from the comparison's base one.
func (p Point) Place(base Placement) Placement {
	out := base
	p.each(func(f *Factor, v string) {
		if f.Place != nil {
			f.Place(v, &out)
		}
	})
	return out
}

// MarshalJSON writes the factors as an object in the table's order.
func (p Point) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	var err error
	p.shown(func(f *Factor, v string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.JSON)
		val, e := json.Marshal(f.Encode(v))
		err = cmp.Or(err, e)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	})
	b.WriteByte('}')
	return b.Bytes(), err
}

// UnmarshalJSON reads the object MarshalJSON writes; a factor it lacks
// (one added since the record was written) is at its default, which is
// what that record's run did.
func (p *Point) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	vals := defaultValues()
	for i, f := range Factors {
		raw, ok := m[f.JSON]
		if !ok {
			continue
		}
		v, err := f.Decode(raw)
		if err != nil {
			return fmt.Errorf("factor %s: %w", f.Name, err)
		}
		vals[i] = v
	}
	*p = pointOf(vals)
	return nil
}

// Space is every value of every factor the comparison sweeps, in the
// table's order.
type Space [][]string

// DefaultSpace sweeps nothing: every factor at its default.
func DefaultSpace() Space {
	sp := make(Space, len(Factors))
	for i, f := range Factors {
		sp[i] = []string{f.canonicalDefault()}
	}
	return sp
}

// SpaceOf is the space of the given points: every factor's values as they
// first appear among them.
func SpaceOf(pts []Point) Space {
	sp := make(Space, len(Factors))
	for _, p := range pts {
		for i, v := range p.values() {
			if !slices.Contains(sp[i], v) {
				sp[i] = append(sp[i], v)
			}
		}
	}
	for i, f := range Factors {
		if len(sp[i]) == 0 {
			sp[i] = []string{f.canonicalDefault()}
		}
	}
	return sp
}

// Values are the swept values of the named factor.
func (sp Space) Values(name string) []string {
	_, i := lookupFactor(name)
	if i < 0 || i >= len(sp) {
		return nil
	}
	return sp[i]
}

// Points is the cross product, the first factor outermost.
func (sp Space) Points() []Point {
	acc := [][]string{{}}
	for _, vals := range sp {
		var next [][]string
		for _, prefix := range acc {
			for _, v := range vals {
				next = append(next, append(append([]string(nil), prefix...), v))
			}
		}
		acc = next
	}
	out := make([]Point, 0, len(acc))
	for _, vals := range acc {
		out = append(out, pointOf(vals))
	}
	return out
}

// String lists every factor with its values, for the report:
// "work 0s, 10µs, durability none, …".
func (sp Space) String() string {
	var parts []string
	for i, f := range Factors {
		if i < len(sp) && !sp.omitted(i) {
			parts = append(parts, f.Label+" "+strings.Join(sp[i], ", "))
		}
	}
	return strings.Join(parts, ", ")
}

// MarshalJSON writes the space as an object of lists in the table's order.
func (sp Space) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range Factors {
		if sp.omitted(i) {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.JSON)
		enc := []any{}
		if i < len(sp) {
			for _, v := range sp[i] {
				enc = append(enc, f.Encode(v))
			}
		}
		val, err := json.Marshal(enc)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// omitted says whether the space leaves factor i out of its summary and
// JSON: it sweeps only the default of a factor that omits it.
func (sp Space) omitted(i int) bool {
	return i < len(sp) && len(sp[i]) == 1 && Factors[i].omitted(sp[i][0])
}

// UnmarshalJSON reads what MarshalJSON writes; a factor it lacks was at its
// default.
func (sp *Space) UnmarshalJSON(b []byte) error {
	var m map[string][]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	out := DefaultSpace()
	for i, f := range Factors {
		raws, ok := m[f.JSON]
		if !ok {
			continue
		}
		out[i] = nil
		for _, raw := range raws {
			v, err := f.Decode(raw)
			if err != nil {
				return fmt.Errorf("factor %s: %w", f.Name, err)
			}
			out[i] = append(out[i], v)
		}
	}
	*sp = out
	return nil
}
