// Counter Increment, the inputQ-vs-mutex seed's workload: every iteration adds
// DELTA (default 1) and the acknowledged deltas are summed in
// acked_increment_delta, so the counter's movement can be checked exactly.
//
//   bin/k6 run k6/counter.js                                   # 10 VUs, 30 s
//   VUS=100 DURATION=20s bin/k6 run k6/counter.js
//   MODEL=open RATE=5000 bin/k6 run k6/counter.js
//
// Every knob is an environment variable; docs/k6.md lists them all.

import { makeTest } from './lib/locklab.js';

const test = makeTest('counter');

export const options = test.options;
export const setup = test.setup;
export default test.run;
export const handleSummary = test.handleSummary;
