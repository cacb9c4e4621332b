// Key-value Put/Get: READ_RATIO (default 0.9) of the iterations Get, the rest
// Put a VALUE_SIZE-byte value (default 581, the rpcx seed's message). Every VU
// works on its own KEYS_PER_VU keys, so each answer's version can be checked.
//
//   bin/k6 run k6/kv.js
//   VALUE_SIZE=4096 READ_RATIO=0.5 bin/k6 run k6/kv.js
//
// Every knob is an environment variable; docs/k6.md lists them all.

import { makeTest } from './lib/locklab.js';

const test = makeTest('kv');

export const options = test.options;
export const setup = test.setup;
export default test.run;
export const handleSummary = test.handleSummary;
