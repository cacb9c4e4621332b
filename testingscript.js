// The default k6 run, as in the inputQ-vs-mutex seed: counter Increment,
// 10 VUs, 30 s, against a server on 127.0.0.1:50055.
//
//   go run main.go -mode inputQ &
//   bin/k6 run testingscript.js
//   bin/k6 run --vus 100 --duration 20s testingscript.js
//   ADDR=127.0.0.1:50056 WORKLOAD=bank SCENARIO=B VUS=50 DURATION=10s bin/k6 run testingscript.js
//
// WORKLOAD picks counter (default), bank or kv; every other knob is an
// environment variable shared with the scripts in k6/ (docs/k6.md).

import { makeTest } from './k6/lib/locklab.js';

const test = makeTest(__ENV.WORKLOAD || 'counter');

export const options = test.options;
export const setup = test.setup;
export default test.run;
export const handleSummary = test.handleSummary;
