// locklab's k6 library: makeTest(workload) returns everything a script exports
// (options, setup, the default function, handleSummary), so every script —
// k6/counter.js, k6/bank.js, k6/kv.js and the root testingscript.js — is the
// same few lines. docs/k6.md documents the knobs and the JSON summary.

import grpc from 'k6/net/grpc';
import { CODE_NAMES, WORKLOADS, admin, cfg, client, codeName, connect, disconnect, resetRequest, unexpectedErrors } from './core.js';
import { TREND_STATS, handleSummary } from './summary.js';
import { KV_VALUE, sharedKey, workloads } from './workloads.js';

export { cfg } from './core.js';

function options(w) {
  const thresholds = {
    // Any failed check (an unexpected status or a wrong answer) or any
    // unexpected error makes k6 exit non-zero.
    checks: ['rate==1'],
    unexpected_errors: ['count==0'],
    // Empty lists only make k6 keep these sub-metrics for the summary. Load
    // calls run in the scenario named default (both models); setup's calls
    // run outside any scenario and stay out of the figures.
    'grpc_req_duration{scenario:default}': [],
  };
  for (const c of w.cases) thresholds[`grpc_req_duration{case:${c}}`] = [];
  // The summary's by_code and ok (k6 keeps only the sub-metrics named here).
  for (const code of CODE_NAMES) thresholds[`calls{code:${code}}`] = [];
  thresholds['calls{outcome:ok}'] = [];
  const o = { thresholds, summaryTrendStats: TREND_STATS, setupTimeout: '120s' };
  if (cfg.model === 'closed') {
    // Top-level vus/duration, not a scenario, so `k6 run --vus/--duration`
    // still override them.
    o.vus = cfg.vus;
    o.duration = cfg.duration;
  } else {
    o.scenarios = {
      // Named default like the closed model's implicit scenario, so the
      // summary's sub-metrics are the same in both models.
      default: {
        executor: 'constant-arrival-rate',
        rate: cfg.rate,
        timeUnit: '1s',
        duration: cfg.duration,
        preAllocatedVUs: cfg.preVUs,
        maxVUs: cfg.maxVUs,
      },
    };
  }
  return o;
}

// setup runs once per k6 process (so once per segment of a split test): bank
// resets the server unless RESET=0; a skewed kv run puts its shared keys;
// every script learns from GetStats whether answers carry state worth
// checking and how many accounts there are.
function setup(name) {
  connect();
  let stats;
  try {
    if (name === 'bank' && cfg.reset) admin('Reset', resetRequest());
    if (name === 'kv' && cfg.skew > 0) putSharedKeys();
    stats = admin('GetStats');
  } finally {
    disconnect();
  }
  const data = {
    mode: stats.mode,
    // noop mode answers without a store: versions and balances mean nothing.
    storeBacked: stats.storeBacked === true,
    accounts: Number(stats.accounts) || cfg.accounts,
  };
  if (name === 'bank' && cfg.oneAccount > data.accounts) {
    throw new Error(`ONE_ACCOUNT=${cfg.oneAccount} but the bank has ${data.accounts} accounts`);
  }
  if (name === 'bank' && data.accounts < 2) {
    throw new Error(`the bank has ${data.accounts} accounts; transfers need 2`);
  }
  return data;
}

function putSharedKeys() {
  for (let rank = 0; rank < cfg.sharedKeys; rank++) {
    const res = client.invoke('locklab.v1.KVService/Put', { key: sharedKey(rank), value: KV_VALUE }, { timeout: '60s' });
    if (res.status !== grpc.StatusOK) throw new Error(`putting the shared keys: ${codeName(res.status)}`);
  }
}

// makeTest returns the exports of a script that drives one workload.
export function makeTest(name) {
  const w = workloads[name];
  if (!w) throw new Error(`workload ${name}: want one of ${WORKLOADS.join(', ')}`);
  return {
    options: options(w),
    setup: () => setup(name),
    run: (data) => {
      connect();
      try {
        w.iterate(data);
      } catch (e) {
        // A script error must fail the run, not just print a line.
        unexpectedErrors.add(1, { case: 'script', status: 'EXCEPTION' });
        throw e;
      }
    },
    handleSummary: (data) => handleSummary(name, w.cases, data),
  };
}
