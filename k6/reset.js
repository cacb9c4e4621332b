// Resets the server once, outside any load: the bank to SCENARIO (A, B or C)
// with ACCOUNTS and BALANCE, the counter to 0, the key-value map emptied.
// A split (--execution-segment) bank run needs this, because every k6
// process runs setup(): run this first, then the segments with RESET=0.
//
//   SCENARIO=B bin/k6 run -q k6/reset.js

import exec from 'k6/execution';
import { admin, cfg, connect, disconnect, resetRequest } from './lib/core.js';

export const options = { vus: 1, iterations: 1 };

export default function () {
  connect();
  try {
    admin('Reset', resetRequest());
  } catch (e) {
    exec.test.fail(String(e));
  } finally {
    disconnect();
  }
}

export function handleSummary(data) {
  const ok = !data.metrics.unexpected_errors || data.metrics.unexpected_errors.values.count === 0;
  return { stdout: `reset ${cfg.addr}: scenario ${cfg.scenario}, ${cfg.accounts} accounts${ok ? '' : ' FAILED'}\n` };
}
