// The parts every locklab k6 script shares: configuration from __ENV, the one
// gRPC connection per VU, and the call wrapper that checks every answer.
//
// This module is evaluated once per VU in the init context (k6 runs the init
// code of every module for each VU), so module-level `let`s are VU-local.

import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

// ---- configuration ---------------------------------------------------------

function env(name, def) {
  const v = __ENV[name];
  return v === undefined || v === '' ? def : v;
}

function envInt(name, def, min, max) {
  const raw = env(name, String(def));
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name}=${raw}: want an integer in ${min}..${max}`);
  }
  return n;
}

function envFloat(name, def, min, max) {
  const raw = env(name, String(def));
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new Error(`${name}=${raw}: want a number in ${min}..${max}`);
  }
  return n;
}

function envEnum(name, def, allowed) {
  const v = env(name, def);
  if (!allowed.includes(v)) {
    throw new Error(`${name}=${v}: want one of ${allowed.join(', ')}`);
  }
  return v;
}

function envBool(name, def) {
  const v = env(name, def ? '1' : '0').toLowerCase();
  if (['1', 'true', 'yes'].includes(v)) return true;
  if (['0', 'false', 'no'].includes(v)) return false;
  throw new Error(`${name}=${v}: want 1 or 0`);
}

// ---- the workloads: load/workloads.json, the one definition ------------------
//
// The Go driver (package load) embeds the same file, so the two drivers
// cannot drift. open() runs in the init context only; the path is resolved
// against this file (k6's open() would otherwise resolve a relative path
// against the entry script), and `k6 archive` includes the file.
export const DEFS = JSON.parse(open(import.meta.resolve('../../load/workloads.json')));
if (DEFS.schema !== 'locklab.workloads/v1') {
  throw new Error(`load/workloads.json: schema ${DEFS.schema}, want locklab.workloads/v1`);
}
const BANK = DEFS.workloads.bank;
const KV = DEFS.workloads.kv;

// The bank cases, in the order the seed lists them, and the workload names.
export const BANK_CASES = BANK.cases;
export const WORKLOADS = Object.keys(DEFS.workloads);
const SCENARIOS = Object.keys(BANK.scenarios).sort();

// READ_RATIO: unset means the workload's default (bank: the mix; kv:
// workloads.json's ratio); set, it is the share of reads.
const readRatioSet = env('READ_RATIO', null) !== null;

// cfg is the whole run's configuration; docs/k6.md lists every variable.
export const cfg = {
  addr: env('ADDR', '127.0.0.1:50055'),
  model: envEnum('MODEL', 'closed', ['closed', 'open']),
  vus: envInt('VUS', 10, 1, 100000),
  duration: env('DURATION', '30s'),
  rate: envInt('RATE', 1000, 1, 10000000),
  maxVUs: envInt('MAX_VUS', 1000, 1, 100000),
  preVUs: null, // filled below: it defaults from MAX_VUS
  reset: envBool('RESET', true),
  checkBody: envBool('CHECK_BODY', false),
  connectTimeout: env('CONNECT_TIMEOUT', '10s'),
  timeout: env('REQUEST_TIMEOUT', '10s'),
  // Zipf θ of account and key choice (0 uniform, 0.99 hot); < 1.
  skew: envFloat('SKEW', 0, 0, 0.999999),
  // counter
  delta: envInt('DELTA', DEFS.workloads.counter.defaults.delta, 0, 1000000000),
  // bank
  scenario: envEnum('SCENARIO', BANK.defaults.scenario, SCENARIOS),
  accounts: envInt('ACCOUNTS', BANK.defaults.accounts, 2, 1000000),
  balance: envInt('BALANCE', BANK.defaults.balance, 0, Number.MAX_SAFE_INTEGER), // 0: the server's default, 20,000,000
  amount: envInt('AMOUNT', BANK.defaults.amount, 1, Number.MAX_SAFE_INTEGER),
  oneAccount: envInt('ONE_ACCOUNT', BANK.defaults.one_account, 1, 1000000),
  historyLimit: envInt('HISTORY_LIMIT', BANK.defaults.history_limit, 1, 1000),
  bankCase: envEnum('CASE', 'mix', BANK_CASES.concat(['mix'])),
  mix: env('MIX', BANK.mix),
  // kv (READ_RATIO is the bank's too: the share of GetBalance)
  valueSize: envInt('VALUE_SIZE', KV.defaults.value_size, 0, 1 << 20),
  readRatio: readRatioSet ? envFloat('READ_RATIO', 0, 0, 1) : -1,
  keysPerVU: envInt('KEYS_PER_VU', KV.defaults.keys_per_caller, 1, 100000),
  sharedKeys: KV.defaults.shared_keys,
};
if (cfg.readRatio >= 0 && (env('MIX', null) !== null || cfg.bankCase !== 'mix')) {
  throw new Error('READ_RATIO with MIX or CASE: give one (READ_RATIO makes the bank mix balance-random vs transfer)');
}
// kvReadRatio is the kv share of Gets; refusalExpected says whether a refused
// overdraft is the server doing its job (scenarios B and C) or lost money (A).
cfg.kvReadRatio = cfg.readRatio >= 0 ? cfg.readRatio : KV.defaults.read_ratio;
cfg.refusalExpected = BANK.scenarios[cfg.scenario].refusal_expected;
cfg.preVUs = envInt('PRE_VUS', Math.min(cfg.maxVUs, 100), 1, cfg.maxVUs);

// ---- metrics ---------------------------------------------------------------

// A refused overdraft (FAILED_PRECONDITION) in bank scenarios B and C: the
// server doing its job, so not a failure.
export const expectedRefusals = new Counter('expected_refusals');
// Any status the call should not have had, a wrong answer (status
// WRONG_ANSWER), and calls that threw.
export const unexpectedErrors = new Counter('unexpected_errors');
// Sum of the deltas of the Increments the server acknowledged with OK: the
// counter must have moved by exactly this much (by at least this much if some
// calls failed in flight, since those may still have been applied).
export const ackedIncrementDelta = new Counter('acked_increment_delta');
// Transfers the server acknowledged with OK.
export const ackedTransfers = new Counter('acked_transfers');
// Every load call, tagged with its status code name (EXCEPTION if it threw)
// and its outcome (ok, refusal, unexpected): the summary's by_code and ok.
export const calls = new Counter('calls');

// ---- the connection --------------------------------------------------------

// The .proto is compiled once per VU in the init context, never reflected.
// The path is resolved against this file, so every script, wherever it lives,
// finds the repository's proto/ folder (k6 archives include it too).
export const client = new grpc.Client();
client.load([import.meta.resolve('../../proto')], 'locklab/v1/locklab.proto');

const codeNames = {};
for (const k of Object.keys(grpc)) {
  if (k.startsWith('Status')) {
    // StatusFailedPrecondition -> FAILED_PRECONDITION
    codeNames[grpc[k]] = k.slice(6).replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
  }
}
codeNames[grpc.StatusCanceled] = 'CANCELLED'; // gRPC's spelling, as the Go driver writes it

// CODE_NAMES lists every status name a call can be tagged with.
export const CODE_NAMES = Object.values(codeNames).concat(['EXCEPTION']);

// codeName turns a numeric gRPC status into its canonical name.
export function codeName(code) {
  return codeNames[code] || `CODE_${code}`;
}

let connected = false; // VU-local: one connection per VU, opened once
let warned = false; // VU-local: log the first unexpected answer only

// connect opens this VU's connection on its first iteration and keeps it. A VU
// that cannot reach the server aborts the test: nothing it measured would
// mean anything.
export function connect() {
  if (connected) return;
  try {
    client.connect(cfg.addr, { plaintext: true, timeout: cfg.connectTimeout });
  } catch (e) {
    unexpectedErrors.add(1, { case: 'connect', status: 'CONNECT' });
    check(null, { 'connect to the server': () => false }, { case: 'connect' });
    exec.test.abort(`cannot connect to ${cfg.addr}: ${e}`);
  }
  connected = true;
}

// disconnect closes the connection (setup's, which is not reused).
export function disconnect() {
  if (connected) client.close();
  connected = false;
}

// call invokes one RPC on the load path and checks its answer.
//   spec.case     the `case` tag: the summary reports every case separately
//   spec.refusal  FAILED_PRECONDITION is an expected refusal (bank B and C)
//   spec.body     optional (message) => bool: decodes the answer and checks
//                 it; without it the body is discarded unread
// Every call ends in exactly one of: OK (with a consistent body), an
// expected refusal, or an unexpected error (a wrong status, a wrong answer,
// or a call that threw), as in the Go driver (package load).
// It returns the answer, or null if the call threw.
export function call(method, req, spec) {
  const tags = { case: spec.case };
  let res;
  try {
    res = client.invoke(method, req, {
      tags,
      timeout: cfg.timeout,
      discardResponseMessage: !spec.body,
    });
  } catch (e) {
    calls.add(1, { case: spec.case, code: 'EXCEPTION', outcome: 'unexpected' });
    unexpected(spec.case, 'EXCEPTION', String(e));
    check(null, { [`${spec.case}: call completed`]: () => false }, tags);
    return null;
  }
  const refusalOK = !!spec.refusal;
  const name = `${spec.case}: ${refusalOK ? 'OK or refused (FAILED_PRECONDITION)' : 'OK'}${
    spec.body ? ', answer consistent' : ''}`;
  let ok;
  let outcome = 'ok';
  if (res.status === grpc.StatusOK) {
    ok = spec.body ? safeBody(spec.body, res.message) : true;
    if (!ok) {
      outcome = 'unexpected';
      unexpected(spec.case, 'WRONG_ANSWER', JSON.stringify(res.message).slice(0, 300));
    }
  } else if (refusalOK && res.status === grpc.StatusFailedPrecondition) {
    outcome = 'refusal';
    expectedRefusals.add(1, { case: spec.case });
    ok = true;
  } else {
    outcome = 'unexpected';
    unexpected(spec.case, codeName(res.status), res.error && res.error.message);
    ok = false;
  }
  calls.add(1, { case: spec.case, code: codeName(res.status), outcome });
  check(res, { [name]: () => ok }, tags);
  return res;
}

function safeBody(fn, msg) {
  try {
    return fn(msg) === true;
  } catch (e) {
    return false;
  }
}

function unexpected(caseName, status, detail) {
  unexpectedErrors.add(1, { case: caseName, status });
  if (!warned) {
    warned = true;
    console.warn(`${caseName}: unexpected ${status}: ${detail || ''}`);
  }
}

// ---- admin calls (setup and verification; never on the load path) ---------

// admin invokes an AdminService RPC outside the measured load and throws
// unless it answered OK.
export function admin(rpc, req) {
  const res = client.invoke(`locklab.v1.AdminService/${rpc}`, req || {}, { timeout: '60s' });
  if (res.status !== grpc.StatusOK) {
    throw new Error(`AdminService/${rpc}: ${codeName(res.status)} ${res.error && res.error.message}`);
  }
  return res.message;
}

// resetRequest is the Reset a bank run starts from.
export function resetRequest() {
  return {
    scenario: `SCENARIO_${cfg.scenario}`,
    accounts: cfg.accounts,
    initialBalance: String(cfg.balance),
  };
}
