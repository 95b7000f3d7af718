// Preloaded into the gateway by `npm run bench -- throughput --allocations`: V8's sampling heap
// profiler from start to exit, counting every sampled allocation, those the garbage collector has
// freed since included (garbage is what this measures), written at exit to
// bench/profiles/<pid>.heapprofile, with the number of requests the process served.
// With BENCH_ALLOCATION_PROMOTED=1 (`npm run bench -- memory --promoted`) it counts only what
// outlived the young generation's collections (scavenges), promoted to the old generation, whether
// a full collection freed it later or not, and only from SIGUSR2 on (the requests counted from
// then): the old generation's growth under load, which is the peak's.
const { subscribe } = require('node:diagnostics_channel');
const { mkdirSync, writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');
const { join } = require('node:path');

const dir = process.env.BENCH_ALLOCATION_DIR;
let requests = 0;
subscribe('http.server.request.start', () => requests++);
const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
const promotedOnly = process.env.BENCH_ALLOCATION_PROMOTED === '1';
const start = () =>
  session.post('HeapProfiler.startSampling', {
    samplingInterval: promotedOnly ? 16384 : 32768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: !promotedOnly,
  });
if (promotedOnly) {
  process.once('SIGUSR2', () => {
    requests = 0;
    start();
  });
} else {
  start();
}
process.once('exit', () => {
  // An in-process session answers synchronously: the profile is written before the process ends.
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error || !dir) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${process.pid}.heapprofile`), JSON.stringify({ ...result.profile, requests }));
  });
});
