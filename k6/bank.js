// The bank of the ghz seed: setup() resets the server to SCENARIO A, B or C
// (RESET=0 skips that: do it once yourself before a split run), then each
// iteration runs one CASE — transfer (random pair, AMOUNT 1,000), balance-one,
// balance-random, history-one, history-random — or, with CASE=mix (the
// default), one drawn by the MIX weights. Refused overdrafts in B and C are
// counted in expected_refusals, not as failures.
//
//   SCENARIO=B bin/k6 run k6/bank.js
//   SCENARIO=A CASE=transfer VUS=100 DURATION=20s bin/k6 run k6/bank.js
//
// Every knob is an environment variable; docs/k6.md lists them all.

import { makeTest } from './lib/locklab.js';

const test = makeTest('bank');

export const options = test.options;
export const setup = test.setup;
export default test.run;
export const handleSummary = test.handleSummary;
