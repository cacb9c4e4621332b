// Checks the server's invariants through the API after load, and exits
// non-zero on any violation. One VU, one iteration; used by `make e2e`
// (k6/e2e.sh) and by hand:
//
//   SUMMARIES=/tmp/a.json,/tmp/b.json CHECK_COUNTER=1 bin/k6 run -q k6/verify.js
//   EXPECT_BANK=B EXPECT_REFUSALS=1 SUMMARIES=/tmp/bank.json bin/k6 run -q k6/verify.js
//
// Knobs (all optional):
//   ADDR             server address (127.0.0.1:50055)
//   EXPECT_MODE      GetStats.mode must equal this
//   SUMMARIES        comma-separated locklab.load-summary/v1 files (absolute
//                    paths), from k6 or the Go driver: each must have made
//                    calls, with no unexpected error (and, from k6, no failed
//                    check)
//   CHECK_COUNTER=1  the counter (GetValue and GetStats) must equal
//                    COUNTER_BASE (0) + the summaries' acked_increment_delta
//                    (at least that if a summary saw unexpected errors: such a
//                    call may still have been applied)
//   EXPECT_BANK      A, B or C: the bank must still hold exactly what that
//                    scenario started with (ACCOUNTS, BALANCE as for bank.js)
//   EXPECT_REFUSALS=1  the summaries together counted expected_refusals > 0
//   AGREE=0.15       every summary (drivers on the same load) agrees with the
//                    first on calls/s and p50 latency within 15% of the larger
// Always, when the mode keeps state: no balance below 0. A mode that keeps no
// state (GetStats.store_backed false: noop) gets only the summary checks.

import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { DEFS, admin, cfg, client, connect, disconnect } from './lib/core.js';

export const options = {
  vus: 1,
  iterations: 1,
  thresholds: { checks: ['rate==1'] },
};

const paths = (__ENV.SUMMARIES || '').split(',').filter((p) => p !== '');
// open() only works in the init context.
const summaries = paths.map((p) => ({ path: p, doc: JSON.parse(open(p)) }));

// How many of n accounts a scenario funds (load/workloads.json says which).
const FUNDED = { all: (n) => n, odd: (n) => Math.ceil(n / 2), none: () => 0 };

let failed = 0;

// expect records one verdict as a check; its name carries the figures, since
// handleSummary runs in a fresh VU and only sees the checks.
function expect(name, ok, detail) {
  check(null, { [`${name}: ${detail}`]: () => ok });
  if (!ok) failed++;
}

// BigInt keeps int64 totals exact (20,000,000 × 1000 fits a double, but a
// custom BALANCE × ACCOUNTS need not).
const big = (v) => BigInt(String(v || 0));

function verify() {
  const stats = admin('GetStats');
  if (__ENV.EXPECT_MODE) {
    expect('mode', stats.mode === __ENV.EXPECT_MODE, `server mode ${stats.mode}, want ${__ENV.EXPECT_MODE}`);
  }

  let acked = 0n;
  let unexpected = 0;
  let refusals = 0;
  for (const { path, doc } of summaries) {
    const name = path.split('/').pop();
    expect(`${name}: schema`, doc.schema === 'locklab.load-summary/v1', `schema ${doc.schema}`);
    expect(`${name}: did work`, doc.calls > 0 && doc.ok + doc.expected_refusals > 0,
      `${doc.calls} calls, ${doc.ok} OK, ${doc.expected_refusals} refused as expected (${doc.driver})`);
    if (doc.k6) {
      expect(`${name}: no failed check`, doc.k6.checks.fails === 0, `${doc.k6.checks.fails} failed checks`);
    }
    expect(`${name}: no unexpected error`, doc.unexpected_errors === 0, `${doc.unexpected_errors} unexpected errors`);
    acked += BigInt(Math.round(doc.acked_increment_delta || 0));
    unexpected += doc.unexpected_errors || 0;
    refusals += doc.expected_refusals || 0;
  }
  if (__ENV.AGREE) agree(Number(__ENV.AGREE));
  if (!stats.storeBacked) {
    expect('state', true, `mode ${stats.mode} keeps no state: no invariant applies`);
    return;
  }

  if (__ENV.EXPECT_REFUSALS === '1') {
    expect('refusals counted', refusals > 0, `${refusals} expected refusals (FAILED_PRECONDITION) in the summaries`);
  }
  expect('no negative balance', big(stats.minBalance) >= 0n, `smallest balance ${stats.minBalance}`);
  if (__ENV.EXPECT_BANK) {
    const sc = DEFS.workloads.bank.scenarios[__ENV.EXPECT_BANK];
    const funded = sc && FUNDED[sc.funded];
    if (!funded) throw new Error(`EXPECT_BANK=${__ENV.EXPECT_BANK}: want one of ${Object.keys(DEFS.workloads.bank.scenarios).join(', ')}`);
    const balance = cfg.balance === 0 ? 20000000n : BigInt(cfg.balance);
    const want = BigInt(funded(cfg.accounts)) * balance;
    expect('money conserved', big(stats.totalBalance) === want,
      `total ${stats.totalBalance}, scenario ${__ENV.EXPECT_BANK} with ${cfg.accounts} accounts started with ${want}; ${stats.transfers} transfers applied`);
  }
  if (__ENV.CHECK_COUNTER === '1') {
    const res = client.invoke('locklab.v1.CounterService/GetValue', {});
    expect('GetValue answers', res.status === grpc.StatusOK, `status ${res.status}`);
    const value = big(res.message && res.message.value);
    const want = big(__ENV.COUNTER_BASE) + acked;
    expect('GetValue agrees with GetStats', value === big(stats.counterValue),
      `GetValue ${value}, GetStats ${stats.counterValue}`);
    if (unexpected === 0) {
      expect('no lost or extra increment', value === want, `counter ${value}, acknowledged ${want}`);
    } else {
      expect('no lost increment', value >= want, `counter ${value}, acknowledged ${want}, ${unexpected} calls failed in flight`);
    }
  }
}

// agree compares every summary with the first: the agreement check between
// the drivers (k6, the Go driver, ghz) where none is saturated.
function agree(within) {
  if (!(within > 0) || summaries.length < 2) throw new Error(`AGREE=${__ENV.AGREE}: want a fraction > 0 and at least two SUMMARIES`);
  const [a, ...others] = summaries.map((s) => s.doc);
  for (const b of others) {
    const figures = [
      ['calls/s', a.calls_per_s, b.calls_per_s],
      ['p50 ms', a.latency_ms.p50, b.latency_ms.p50],
    ];
    for (const [name, x, y] of figures) {
      const off = Math.abs(x - y) / Math.max(x, y);
      expect(`${a.driver} and ${b.driver} agree on ${name}`, off <= within,
        `${x.toFixed(3)} vs ${y.toFixed(3)}: ${(off * 100).toFixed(1)}% apart, ${(within * 100).toFixed(0)}% allowed`);
    }
  }
}

export default function () {
  connect();
  try {
    verify();
  } catch (e) {
    expect('verification ran', false, String(e));
  } finally {
    disconnect();
  }
  if (failed > 0) exec.test.fail(`${failed} invariant check(s) failed`);
}

export function handleSummary(data) {
  const lines = data.root_group.checks.map((c) => `  ${c.fails === 0 ? '✓' : '✗'} ${c.name}`);
  return { stdout: `verify ${cfg.addr}\n${lines.join('\n')}\n` };
}
