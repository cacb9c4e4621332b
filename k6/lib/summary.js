// End-of-test output: the driver-neutral locklab.load-summary/v1 JSON
// document (docs/load.md; the Go driver writes the same schema) and a text
// summary for the terminal.
//
// Why our own text summary: when handleSummary returns anything, k6 prints
// only what it returns, and k6 v1.8.1's own textSummary is not importable
// offline (it is internal to the binary; the jslib version is an https
// import). So this file renders the usual k6-style summary itself.

import exec from 'k6/execution';
import { CODE_NAMES, cfg } from './core.js';
import { BANK_MIX } from './workloads.js';

export const SCHEMA = 'locklab.load-summary/v1';
export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)', 'count'];

// ---- JSON ------------------------------------------------------------------

function counterValue(m) {
  return (m && m.values && m.values.count) || 0;
}

// seconds reads a k6 duration ("30s", "1m30s", "500ms", "2h") as seconds;
// null if it is not one.
export function seconds(d) {
  if (d === null || d === undefined) return null;
  if (typeof d === 'number') return d / 1000; // k6 gives milliseconds
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g;
  const unit = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  let total = 0;
  let matched = '';
  let m;
  while ((m = re.exec(String(d))) !== null) {
    total += Number(m[1]) * unit[m[2]];
    matched += m[0];
  }
  return matched === String(d) && matched !== '' ? total : null;
}

// effective reads the run's shape from k6's consolidated options, so --vus,
// --duration or --iterations on the command line are reported as they ran.
function effective() {
  const e = {
    executor: cfg.model === 'closed' ? 'constant-vus' : 'constant-arrival-rate',
    model: cfg.model,
    vus: cfg.model === 'closed' ? cfg.vus : cfg.preVUs,
    duration: cfg.duration,
    rate: cfg.model === 'open' ? cfg.rate : null,
    segment: null,
  };
  try {
    const o = exec.test.options;
    const names = Object.keys(o.scenarios || {});
    if (names.length === 1) {
      const s = o.scenarios[names[0]];
      e.executor = s.executor;
      e.model = s.executor === 'constant-arrival-rate' ? 'open' : 'closed';
      e.vus = s.vus != null ? s.vus : s.preAllocatedVUs;
      e.duration = s.duration != null ? String(s.duration) : null;
      e.rate = s.rate != null ? s.rate : null;
    }
    if (o.executionSegment) e.segment = String(o.executionSegment);
  } catch (err) {
    // Older k6: keep what the environment asked for.
  }
  return e;
}

// latencyMs is a k6 trend's values (ms) in the schema's latency_ms shape.
function latencyMs(t) {
  return {
    min: t.min || 0,
    mean: t.avg || 0,
    p50: t.med || 0,
    p90: t['p(90)'] || 0,
    p95: t['p(95)'] || 0,
    p99: t['p(99)'] || 0,
    p999: t['p(99.9)'] || 0,
    max: t.max || 0,
  };
}

// summaryJSON builds the locklab.load-summary/v1 document from k6's data.
// k6 keeps no mergeable histogram, so hdr is "" and the percentile curve has
// only the points k6 computes; late is not measured (k6's open model drops
// what it cannot start, counted in dropped).
export function summaryJSON(script, cases, data) {
  const m = data.metrics;
  const e = effective();
  const v = (name) => (m[name] && m[name].values) || {};
  const all = v('grpc_req_duration{scenario:default}');
  const byCase = {};
  for (const c of cases) {
    const t = v(`grpc_req_duration{case:${c}}`);
    byCase[c] = { count: t.count || 0, p50_ms: t.med || 0, p99_ms: t['p(99)'] || 0 };
  }
  const byCode = {};
  for (const code of CODE_NAMES) {
    const n = counterValue(m[`calls{code:${code}}`]);
    if (n > 0) byCode[code] = n;
  }
  const ok = counterValue(m['calls{outcome:ok}']);
  const refusals = counterValue(m.expected_refusals);
  const unexpected = counterValue(m.unexpected_errors);
  const calls = ok + refusals + unexpected;
  const duration = seconds(e.duration) || data.state.testRunDurationMs / 1000;
  const isBank = script === 'bank';
  const isKV = script === 'kv';
  let readRatio = -1;
  if (isKV) readRatio = cfg.kvReadRatio;
  else if (isBank && cfg.readRatio >= 0) readRatio = cfg.readRatio;
  const latency = latencyMs(all);
  return {
    schema: SCHEMA,
    driver: 'k6',
    driver_version: 'k6 (tools/go.mod)',
    workload: script,
    scenario: isBank ? cfg.scenario : '',
    mix: isBank ? BANK_MIX : '',
    model: e.model,
    // Open model: the most VUs, the bound on iterations in flight.
    callers: e.model === 'open' ? cfg.maxVUs : e.vus,
    conns: e.model === 'open' ? cfg.maxVUs : e.vus, // one connection per VU
    rate: e.model === 'open' ? e.rate : 0,
    skew: cfg.skew,
    read_ratio: readRatio,
    duration_s: duration,
    calls,
    calls_per_s: duration > 0 ? calls / duration : 0,
    ok,
    expected_refusals: refusals,
    unexpected_errors: unexpected,
    by_code: byCode,
    by_case: byCase,
    latency_ms: latency,
    percentiles: calls > 0
      ? [[50, latency.p50], [90, latency.p90], [95, latency.p95], [99, latency.p99], [99.9, latency.p999], [100, latency.max]]
      : [],
    hdr: '',
    acked_increment_delta: counterValue(m.acked_increment_delta),
    acked_transfers: counterValue(m.acked_transfers),
    dropped: counterValue(m.dropped_iterations),
    late: 0,
    // What only k6 knows (the Go struct keeps it as summary.Summary.K6).
    k6: {
      executor: e.executor,
      vus: e.vus,
      max_vus: e.model === 'open' ? cfg.maxVUs : null,
      vus_max: (m.vus_max && m.vus_max.values.max) || 0,
      execution_segment: e.segment,
      test_run_duration_ms: data.state.testRunDurationMs,
      iterations: counterValue(m.iterations),
      checks: {
        passes: (m.checks && m.checks.values.passes) || 0,
        fails: (m.checks && m.checks.values.fails) || 0,
      },
      data_received_bytes: counterValue(m.data_received),
      data_sent_bytes: counterValue(m.data_sent),
      // A whole iteration, connecting and checks included: the seed's
      // iteration_duration column.
      iteration_duration_ms: latencyMs(v('iteration_duration')),
      check_body: cfg.checkBody,
      reset: isBank ? cfg.reset : null,
    },
  };
}

// ---- text ------------------------------------------------------------------

function humanDuration(ms) {
  if (ms === 0) return '0s';
  if (ms < 0.001) return `${(ms * 1e6).toFixed(0)}ns`;
  if (ms < 1) return `${(ms * 1000).toFixed(2)}µs`;
  if (ms < 1000) return `${ms.toFixed(2)}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(2)}s`;
  const min = Math.floor(ms / 60000);
  return `${min}m${((ms - min * 60000) / 1000).toFixed(1)}s`;
}

function humanBytes(b) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (b >= 1000 && i < units.length - 1) {
    b /= 1000;
    i++;
  }
  return `${i === 0 ? b.toFixed(0) : b.toFixed(1)} ${units[i]}`;
}

function humanNumber(n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function value(metric, v) {
  if (metric.contains === 'time') return humanDuration(v);
  if (metric.contains === 'data') return humanBytes(v);
  return humanNumber(v);
}

function render(metric) {
  const v = metric.values;
  switch (metric.type) {
    case 'trend':
      return TREND_STATS.filter((s) => s in v)
        .map((s) => `${s}=${s === 'count' ? v[s] : value(metric, v[s])}`).join(' ');
    case 'counter':
      return `${value(metric, v.count)}  ${value(metric, v.rate)}/s`;
    case 'rate':
      return `${(v.rate * 100).toFixed(2)}%  ✓ ${v.passes}  ✗ ${v.fails}`;
    case 'gauge':
      return `${humanNumber(v.value)}  min=${humanNumber(v.min)} max=${humanNumber(v.max)}`;
  }
  return JSON.stringify(v);
}

function mark(metric) {
  const th = metric.thresholds || {};
  const names = Object.keys(th);
  if (names.length === 0) return ' ';
  return names.every((n) => th[n].ok) ? '✓' : '✗';
}

function checkLines(group, indent, out) {
  for (const c of group.checks || []) {
    const sign = c.fails === 0 ? '✓' : '✗';
    const detail = c.fails === 0 ? '' : `  ↳ ${c.passes} passed, ${c.fails} failed`;
    out.push(`${indent}${sign} ${c.name}${detail}`);
  }
  for (const g of group.groups || []) {
    out.push(`${indent}█ ${g.name}`);
    checkLines(g, indent + '  ', out);
  }
}

// textSummary renders k6's metrics the way k6's legacy end-of-test summary
// does: checks first, then every metric, sub-metrics indented under theirs,
// ✓/✗ in front of metrics that carry thresholds.
export function textSummary(script, data) {
  const e = effective();
  const shape = e.model === 'open'
    ? `open model, ${e.rate} it/s for ${e.duration} (VUs ${e.vus}..${cfg.maxVUs})`
    : `${e.vus} VUs${e.duration ? ` for ${e.duration}` : ''} (${e.executor})`;
  let what = '';
  if (script === 'bank') what = `, scenario ${cfg.scenario}, mix ${BANK_MIX}${cfg.reset ? '' : ', no reset'}`;
  if (script === 'kv') what = `, ${cfg.valueSize}-byte values, read ratio ${cfg.kvReadRatio}`;
  if (cfg.skew > 0) what += `, skew ${cfg.skew}`;
  const seg = e.segment ? `, segment ${e.segment}` : '';
  const out = ['', `  locklab ${script} @ ${cfg.addr}: ${shape}${what}${seg}`, ''];
  checkLines(data.root_group, '    ', out);
  out.push('');
  const names = Object.keys(data.metrics).sort((a, b) => {
    const [ba, bb] = [a.split('{')[0], b.split('{')[0]];
    if (ba !== bb) return ba < bb ? -1 : 1;
    return a.includes('{') - b.includes('{') || (a < b ? -1 : a > b ? 1 : 0);
  });
  const label = (n) => (n.includes('{') ? `  { ${n.slice(n.indexOf('{') + 1, -1)} }` : n);
  const width = Math.max(...names.map((n) => label(n).length)) + 3;
  for (const n of names) {
    const metric = data.metrics[n];
    if (!metric.values || Object.keys(metric.values).length === 0) continue;
    // The calls{code:…} sub-metrics exist for every code; show those seen.
    if (n.includes('{') && metric.type === 'counter' && metric.values.count === 0) continue;
    const l = label(n);
    out.push(`  ${mark(metric)} ${l}${'.'.repeat(Math.max(1, width - l.length))}: ${render(metric)}`);
  }
  out.push('');
  return out.join('\n') + '\n';
}

// handleSummary prints the text summary and, when SUMMARY_JSON names a file,
// writes the JSON document there.
export function handleSummary(script, cases, data) {
  const out = { stdout: textSummary(script, data) };
  const path = __ENV.SUMMARY_JSON;
  if (path) out[path] = JSON.stringify(summaryJSON(script, cases, data), null, 2) + '\n';
  return out;
}
