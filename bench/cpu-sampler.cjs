// Preloaded into each gateway by `npm run bench -- compare --profile`: V8's CPU profiler, from
// SIGUSR2 (sent once the gateways are started and warmed) until the process exits, written then to
// BENCH_CPU_PROFILE with the number of requests the process served while it ran. The profile of a
// whole run covers every scenario it loads; this one covers only what compare loads.
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
