// Loaded before every test file (jest.config.js setupFiles). CommonJS packages that require() the
// ESM-only Nest packages (@nestjs/throttler) are rewritten by test/support/require-esm.cjs to read
// them from here: the very module instances the application imports, so decorators, metadata and
// classes agree. Node 20.19 does this natively (require(esm)); Jest 29's module loader cannot.
import * as nestCommon from '@nestjs/common';
import * as nestCore from '@nestjs/core';

(globalThis as { __esmForCommonJs?: Record<string, unknown> }).__esmForCommonJs = {
  '@nestjs/common': nestCommon,
  '@nestjs/core': nestCore,
};
