// Preloaded into a gateway by `npm run bench -- path`: on SIGUSR2 the V8 coverage counted since the
// last one is written to NODE_V8_COVERAGE, and the counters start again from zero. Two signals
// around one request make a window with that request alone in it.
'use strict';
const v8 = require('node:v8');

process.on('SIGUSR2', () => v8.takeCoverage());
