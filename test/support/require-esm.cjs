// A Jest transformer for CommonJS packages that require() '@nestjs/common' or '@nestjs/core'
// (ESM-only): each such require() reads the already imported module from the bridge that
// test/support/esm-bridge.ts sets up. See jest.config.js.
const BRIDGED = /require\("(@nestjs\/(?:common|core))"\)/g;

module.exports = {
  process(source) {
    return { code: source.replace(BRIDGED, (_, name) => `globalThis.__esmForCommonJs[${JSON.stringify(name)}]`) };
  },
  getCacheKey(source, path) {
    return require('node:crypto').createHash('sha256').update('require-esm-v1').update(path).update(source).digest('hex');
  },
};
