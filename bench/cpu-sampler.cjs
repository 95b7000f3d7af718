// Preloaded into each gateway by `npm run bench -- compare --profile`: V8's CPU profiler, from
// SIGUSR2 (sent once the gateways are started and the end users' requests are made, before the
// first round's warm-up) until the process exits, written then to BENCH_CPU_PROFILE with the
// number of requests the process served meanwhile. The profile of a whole throughput run covers
// every scenario it loads; this one covers only what compare loads, warm-ups included. Sampling
// costs the process CPU: the profiled gateways' CPU per request is not comparable with the
// pass-through's, only with each other's.
const { subscribe } = require('node:diagnostics_channel');
const { writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');

let requests = 0;
subscribe('http.server.request.start', () => requests++);
const session = new Session();
session.connect();
session.post('Profiler.enable');
// Every 100 µs: a request costs about a millisecond of the machine, so each gets a few samples.
session.post('Profiler.setSamplingInterval', { interval: 100 });
process.once('SIGUSR2', () => {
  requests = 0;
  session.post('Profiler.start');
});
process.once('exit', () => {
  // An in-process session answers synchronously: the profile is written before the process ends.
  session.post('Profiler.stop', (error, result) => {
    if (error || !process.env.BENCH_CPU_PROFILE) return;
    writeFileSync(process.env.BENCH_CPU_PROFILE, JSON.stringify({ ...result.profile, requests }));
  });
});
