// The real content-disposition, loaded by Node's own require (which loads ES modules on Node
// 20.19+) rather than Jest's: @fastify/static require()s this ESM-only package. See jest.config.js.
const { createRequire } = require('node:module');

module.exports = createRequire(__filename)('content-disposition');
