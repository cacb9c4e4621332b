// The three workloads of docs/design.md §workloads as k6 iterations. Each one
// names its cases (the `case` tag every call carries) and runs one call per iteration.

import grpc from 'k6/net/grpc';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { BANK_CASES, DEFS, cfg, call, ackedIncrementDelta, ackedTransfers } from './core.js';

const ok = (res) => res !== null && res.status === grpc.StatusOK;

// ---- counter ---------------------------------------------------------------

const counter = {
  cases: DEFS.workloads.counter.cases,
  iterate(data) {
    const res = call('locklab.v1.CounterService/Increment', { delta: cfg.delta }, {
      case: 'increment',
      body: cfg.checkBody && data.storeBacked ? (m) => Number(m.value) >= cfg.delta : null,
    });
    if (ok(res)) ackedIncrementDelta.add(cfg.delta);
  },
};

// ---- skew ------------------------------------------------------------------

// Zipf draws ranks 0..n-1 with P(i) ∝ 1/(i+1)^θ, 0 <= θ < 1 (θ = 0:
// uniform): the generator of Gray et al. (SIGMOD 1994) as YCSB has it, the
// same as the Go driver's load.Zipf (load/zipf.go, where its test is).
export class Zipf {
  constructor(n, theta) {
    this.n = n;
    this.theta = theta;
    if (theta === 0 || n === 1) return;
    let zetan = 0;
    for (let i = 1; i <= n; i++) zetan += 1 / Math.pow(i, theta);
    const zeta2 = 1 + 1 / Math.pow(2, theta);
    this.zetan = zetan;
    this.alpha = 1 / (1 - theta);
    this.eta = (1 - Math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetan);
    this.half = 1 + Math.pow(0.5, theta);
  }

  next() {
    const u = Math.random();
    if (this.theta === 0 || this.n === 1) return Math.floor(u * this.n);
    const uz = u * this.zetan;
    if (uz < 1) return 0;
    if (uz < this.half) return 1;
    return Math.min(this.n - 1, Math.floor(this.n * Math.pow(this.eta * u - this.eta + 1, this.alpha)));
  }
}

// zipfs caches one generator per size (the bank's size comes from setup()).
const zipfs = {};
function zipf(n) {
  if (!zipfs[n]) zipfs[n] = new Zipf(n, cfg.skew);
  return zipfs[n];
}

// ---- bank ------------------------------------------------------------------

// randomAccount draws an account from 1..n, Zipf-skewed by SKEW (account 1
// the hottest).
function randomAccount(n) {
  return 1 + zipf(n).next();
}

// randomPair draws two distinct accounts from 1..n.
function randomPair(n) {
  const from = randomAccount(n);
  let to = randomAccount(n - 1);
  if (to >= from) to++;
  return [from, to];
}

// parseMix reads MIX ("transfer:2,balance-random:1,…") into cumulative weights.
function parseMix(spec) {
  const out = [];
  let total = 0;
  for (const part of spec.split(',')) {
    const [name, w] = part.split(':');
    const weight = Number(w === undefined ? 1 : w);
    if (!BANK_CASES.includes(name) || !(weight >= 0) || weight === Infinity) {
      throw new Error(`MIX=${spec}: want case:weight pairs, cases ${BANK_CASES.join(', ')}`);
    }
    if (weight > 0) {
      total += weight;
      out.push({ name, upTo: total, weight });
    }
  }
  if (total === 0) throw new Error(`MIX=${spec}: no case has a weight`);
  return out.map((c) => ({ name: c.name, upTo: c.upTo / total, share: c.weight / total }));
}

// bankMixSpec is the mix that runs: READ_RATIO r makes it balance-random r,
// transfer 1-r (workloads.json's read_ratio_cases); else CASE, else MIX.
function bankMixSpec() {
  if (cfg.readRatio >= 0) {
    const rc = DEFS.workloads.bank.read_ratio_cases;
    const parts = [];
    if (cfg.readRatio > 0) parts.push(`${rc.read}:${cfg.readRatio}`);
    if (cfg.readRatio < 1) parts.push(`${rc.write}:${1 - cfg.readRatio}`);
    return parts.join(',');
  }
  return cfg.bankCase === 'mix' ? cfg.mix : `${cfg.bankCase}:1`;
}

const mix = parseMix(bankMixSpec());

// BANK_MIX is the mix as the summary reports it (shares summing to 1).
export const BANK_MIX = mix.map((c) => `${c.name}:${Number(c.share.toPrecision(6))}`).join(',');

function pickCase() {
  const r = Math.random();
  for (const c of mix) if (r < c.upTo) return c.name;
  return mix[mix.length - 1].name;
}

// A refused overdraft is what scenarios B and C are about; in A every account
// holds 20,000 transfers' worth, so a refusal there means money went missing
// (workloads.json says which scenario expects refusals).
const refusalExpected = cfg.refusalExpected;

// historyOK: at most limit transfers, newest first, each touching the account.
function historyOK(m, account) {
  const ts = m.transfers || [];
  if (ts.length > cfg.historyLimit) return false;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i];
    if (t.fromAccount !== account && t.toAccount !== account) return false;
    if (i > 0 && !(Number(t.seq) < Number(ts[i - 1].seq))) return false;
  }
  return true;
}

function transfer(data) {
  const [from, to] = randomPair(data.accounts);
  const res = call('locklab.v1.BankService/TransferMoney',
    { fromAccount: from, toAccount: to, amount: cfg.amount },
    {
      case: 'transfer',
      refusal: refusalExpected,
      body: cfg.checkBody && data.storeBacked
        ? (m) => Number(m.seq) > 0 && Number(m.fromBalance) >= 0 && Number(m.toBalance) >= cfg.amount
        : null,
    });
  if (ok(res)) ackedTransfers.add(1);
}

function balance(data, account, caseName) {
  call('locklab.v1.BankService/GetBalance', { account }, {
    case: caseName,
    body: cfg.checkBody && data.storeBacked ? (m) => Number(m.balance) >= 0 : null,
  });
}

function history(data, account, caseName) {
  call('locklab.v1.BankService/GetHistory', { account, limit: cfg.historyLimit }, {
    case: caseName,
    body: cfg.checkBody && data.storeBacked ? (m) => historyOK(m, account) : null,
  });
}

const bank = {
  cases: mix.map((c) => c.name),
  iterate(data) {
    switch (pickCase()) {
      case 'transfer':
        return transfer(data);
      case 'balance-one':
        return balance(data, cfg.oneAccount, 'balance-one');
      case 'balance-random':
        return balance(data, randomAccount(data.accounts), 'balance-random');
      case 'history-one':
        return history(data, cfg.oneAccount, 'history-one');
      case 'history-random':
        return history(data, randomAccount(data.accounts), 'history-random');
    }
  },
};

// ---- kv --------------------------------------------------------------------
//
// Unskewed (SKEW=0), every VU writes only its own keys,
// vu/<idInTest>/<0..KEYS_PER_VU-1>, round robin, and reads back keys it has
// written. Owning its keys lets a VU check the store exactly: each Put must
// return the key's previous version + 1, and a Get the version of its last
// Put. exec.vu.idInTest is unique across every k6 process of a segmented run
// (__VU is not), so the check also proves that the processes of a split test
// never share keys.
//
// Skewed (SKEW > 0), every VU draws keys shared/<rank> by Zipf over
// workloads.json's shared_keys, so hot keys (and a sharded store's hot
// shards) exist. setup() puts every shared key once; a key's version only
// grows, so each answer must be at least the version this VU saw last for
// that key (a Put's strictly above it). The Go driver does the same.

const value = encoding.b64encode('locklab '.repeat(Math.ceil(cfg.valueSize / 8)).slice(0, cfg.valueSize));
const versions = []; // VU-local: slot -> last version put; 0 = unknown (first put or after an error)
let puts = 0; // VU-local
const seen = []; // VU-local, shared keys: rank -> highest version seen

export const KV_VALUE = value;

export function sharedKey(rank) {
  return `shared/${rank}`;
}

function kvKey(slot) {
  return `vu/${exec.vu.idInTest}/${slot}`;
}

function put(data) {
  const slot = puts % cfg.keysPerVU;
  puts++;
  const last = versions[slot] || 0;
  let got = 0;
  const res = call('locklab.v1.KVService/Put', { key: kvKey(slot), value }, {
    case: 'put',
    body: data.storeBacked
      ? (m) => {
        got = Number(m.version);
        return last > 0 ? got === last + 1 : got >= 1;
      }
      : null,
  });
  // After a failed call the Put may or may not have been applied.
  versions[slot] = ok(res) ? got : 0;
}

function get(data) {
  const slot = Math.floor(Math.random() * Math.min(puts, cfg.keysPerVU));
  const want = versions[slot] || 0;
  call('locklab.v1.KVService/Get', { key: kvKey(slot) }, {
    case: 'get',
    body: cfg.checkBody && data.storeBacked
      ? (m) => m.value.length === value.length && (want === 0 || Number(m.version) === want)
      : null,
  });
}

function shared(data) {
  const rank = zipf(cfg.sharedKeys).next();
  const last = seen[rank] || 0;
  const isGet = Math.random() < cfg.kvReadRatio;
  let got = 0;
  const body = (m) => {
    got = Number(m.version);
    if (isGet) return m.value.length === value.length && got >= Math.max(last, 1);
    return got > last;
  };
  const res = isGet
    ? call('locklab.v1.KVService/Get', { key: sharedKey(rank) }, { case: 'get', body: data.storeBacked ? body : null })
    : call('locklab.v1.KVService/Put', { key: sharedKey(rank), value }, { case: 'put', body: data.storeBacked ? body : null });
  if (ok(res)) seen[rank] = Math.max(last, got);
}

const kv = {
  cases: DEFS.workloads.kv.cases,
  iterate(data) {
    if (cfg.skew > 0) return shared(data);
    // A VU's first iteration always writes, so every read finds its key.
    if (puts === 0 || Math.random() >= cfg.kvReadRatio) return put(data);
    return get(data);
  },
};

export const workloads = { counter, bank, kv };
