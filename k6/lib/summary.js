// End-of-test output: the locklab.k6-summary/v1 JSON document (docs/k6.md)
// and a text summary for the terminal.
//
// Why our own text summary: when handleSummary returns anything, k6 prints
// only what it returns, and k6 v1.8.1's own textSummary is not importable
// offline (it is internal to the binary; the jslib version is an https
// import). So this file renders the usual k6-style summary itself.

import exec from 'k6/execution';
import { cfg } from './core.js';

export const SCHEMA = 'locklab.k6-summary/v1';
export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

// ---- JSON ------------------------------------------------------------------

function trend(m, withCount) {
  const v = (m && m.values) || {};
  const out = {
    avg: v.avg || 0,
    min: v.min || 0,
    med: v.med || 0,
    max: v.max || 0,
    p90: v['p(90)'] || 0,
    p95: v['p(95)'] || 0,
    p99: v['p(99)'] || 0,
  };
  if (withCount) out.count = v.count || 0;
  return out;
}

function counterValue(m) {
  return (m && m.values && m.values.count) || 0;
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

// summaryJSON builds the locklab.k6-summary/v1 document from k6's data.
export function summaryJSON(script, cases, data) {
  const m = data.metrics;
  const e = effective();
  const byCase = {};
  for (const c of cases) {
    byCase[c] = trend(m[`grpc_req_duration{case:${c}}`], true);
  }
  const isBank = script === 'bank';
  const isKV = script === 'kv';
  return {
    schema: SCHEMA,
    script,
    config: {
      addr: cfg.addr,
      model: e.model,
      vus: e.vus,
      duration: e.duration,
      rate: e.rate,
      scenario: isBank ? cfg.scenario : null,
      case: isBank ? cfg.bankCase : null,
      value_size: isKV ? cfg.valueSize : null,
      read_ratio: isKV ? cfg.readRatio : null,
      // Additions to the v1 schema's config (fields may be added, never renamed).
      executor: e.executor,
      max_vus: e.model === 'open' ? cfg.maxVUs : null,
      execution_segment: e.segment,
      reset: isBank ? cfg.reset : null,
      mix: isBank && cfg.bankCase === 'mix' ? cfg.mix : null,
      accounts: isBank ? cfg.accounts : null,
      amount: isBank ? cfg.amount : null,
      delta: script === 'counter' ? cfg.delta : null,
      keys_per_vu: isKV ? cfg.keysPerVU : null,
      check_body: cfg.checkBody,
    },
    test_run_duration_ms: data.state.testRunDurationMs,
    iterations: {
      count: counterValue(m.iterations),
      rate: (m.iterations && m.iterations.values.rate) || 0,
    },
    data_received: {
      bytes: counterValue(m.data_received),
      rate: (m.data_received && m.data_received.values.rate) || 0,
    },
    data_sent: {
      bytes: counterValue(m.data_sent),
      rate: (m.data_sent && m.data_sent.values.rate) || 0,
    },
    iteration_duration_ms: trend(m.iteration_duration, false),
    grpc_req_duration_ms: {
      // Load calls only: setup's Reset and GetStats run outside the scenario.
      all: trend(m['grpc_req_duration{scenario:default}'], true),
      by_case: byCase,
    },
    checks: {
      passes: (m.checks && m.checks.values.passes) || 0,
      fails: (m.checks && m.checks.values.fails) || 0,
    },
    expected_refusals: counterValue(m.expected_refusals),
    unexpected_errors: counterValue(m.unexpected_errors),
    acked_increment_delta: counterValue(m.acked_increment_delta),
    dropped_iterations: counterValue(m.dropped_iterations),
    vus_max: (m.vus_max && m.vus_max.values.max) || 0,
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
  if (script === 'bank') what = `, scenario ${cfg.scenario}, case ${cfg.bankCase}${cfg.reset ? '' : ', no reset'}`;
  if (script === 'kv') what = `, ${cfg.valueSize}-byte values, read ratio ${cfg.readRatio}`;
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
