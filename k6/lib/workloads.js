// The three workloads of DESIGN.md §2 as k6 iterations. Each one names its
// cases (the `case` tag every call carries) and runs one call per iteration.

import grpc from 'k6/net/grpc';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { BANK_CASES, cfg, call, ackedIncrementDelta } from './core.js';

const ok = (res) => res !== null && res.status === grpc.StatusOK;

// ---- counter ---------------------------------------------------------------

const counter = {
  cases: ['increment'],
  iterate(data) {
    const res = call('locklab.v1.CounterService/Increment', { delta: cfg.delta }, {
      case: 'increment',
      body: cfg.checkBody && data.storeBacked ? (m) => Number(m.value) >= cfg.delta : null,
    });
    if (ok(res)) ackedIncrementDelta.add(cfg.delta);
  },
};

// ---- bank ------------------------------------------------------------------

function randomAccount(n) {
  return 1 + Math.floor(Math.random() * n);
}

// randomPair draws two distinct accounts uniformly from 1..n.
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
    if (!BANK_CASES.includes(name) || !(weight >= 0)) {
      throw new Error(`MIX=${spec}: want case:weight pairs, cases ${BANK_CASES.join(', ')}`);
    }
    if (weight > 0) {
      total += weight;
      out.push({ name, upTo: total });
    }
  }
  if (total === 0) throw new Error(`MIX=${spec}: no case has a weight`);
  return out.map((c) => ({ name: c.name, upTo: c.upTo / total }));
}

const mix = cfg.bankCase === 'mix' ? parseMix(cfg.mix) : [{ name: cfg.bankCase, upTo: 1 }];

function pickCase() {
  const r = Math.random();
  for (const c of mix) if (r < c.upTo) return c.name;
  return mix[mix.length - 1].name;
}

// A refused overdraft is what scenarios B and C are about; in A every account
// holds 20,000 transfers' worth, so a refusal there means money went missing.
const refusalExpected = cfg.scenario === 'B' || cfg.scenario === 'C';

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
  call('locklab.v1.BankService/TransferMoney',
    { fromAccount: from, toAccount: to, amount: cfg.amount },
    {
      case: 'transfer',
      refusal: refusalExpected,
      body: cfg.checkBody && data.storeBacked
        ? (m) => Number(m.seq) > 0 && Number(m.fromBalance) >= 0 && Number(m.toBalance) >= cfg.amount
        : null,
    });
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
// Every VU writes only its own keys, vu/<idInTest>/<0..KEYS_PER_VU-1>, round
// robin, and reads back keys it has written. Owning its keys lets a VU check
// the store exactly: each Put must return the key's previous version + 1, and
// a Get the version of its last Put. exec.vu.idInTest is unique across every
// k6 process of a segmented run (__VU is not), so the check also proves that
// the processes of a split test never share keys.

const value = encoding.b64encode('locklab '.repeat(Math.ceil(cfg.valueSize / 8)).slice(0, cfg.valueSize));
const versions = []; // VU-local: slot -> last version put; 0 = unknown (first put or after an error)
let puts = 0; // VU-local

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

const kv = {
  cases: ['get', 'put'],
  iterate(data) {
    // A VU's first iteration always writes, so every read finds its key.
    if (puts === 0 || Math.random() >= cfg.readRatio) return put(data);
    return get(data);
  },
};

export const workloads = { counter, bank, kv };
