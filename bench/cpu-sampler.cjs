// Preloaded into each gateway by `npm run bench -- compare --profile`: V8's CPU profiler, from a
// first SIGUSR2 (sent once the gateways are started and the end users' requests are made, before
// the first round's warm-up) until a second one (sent after the last round), when the profile is
// written to BENCH_CPU_PROFILE with the number of requests the process served meanwhile; or until
// the process exits, if that comes first. The shutdown is not in it (nor the work still pending
// then, such as sealing the last audit events): a profiled gateway took seconds to stop, after
// long runs more than the bench waits before it kills one. The profile of a whole throughput run
// covers every scenario it loads; this one covers only what compare loads, warm-ups included.
// Sampling costs the process CPU: the profiled gateways' CPU per request is not comparable with
// the pass-through's, only with each other's.
const { subscribe } = require('node:diagnostics_channel');
const { renameSync, writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');

let requests = 0;
subscribe('http.server.request.start', () => requests++);
const session = new Session();
session.connect();
session.post('Profiler.enable');
// Every 100 µs: a request costs about a millisecond of the machine, so each gets a few samples.
session.post('Profiler.setSamplingInterval', { interval: 100 });
let state = 'waiting';
const write = () => {
  if (state !== 'profiling') return;
  state = 'written';
  // An in-process session answers synchronously: the profile is written before this returns.
  session.post('Profiler.stop', (error, result) => {
    if (error || !process.env.BENCH_CPU_PROFILE) return;
    // Whole or not at all: the bench takes the file's existence to mean it is complete.
    writeFileSync(`${process.env.BENCH_CPU_PROFILE}.partial`, JSON.stringify({ ...result.profile, requests }));
    renameSync(`${process.env.BENCH_CPU_PROFILE}.partial`, process.env.BENCH_CPU_PROFILE);
  });
};
process.on('SIGUSR2', () => {
  if (state !== 'waiting') return write();
  state = 'profiling';
  requests = 0;
  session.post('Profiler.start');
});
process.once('exit', write);
