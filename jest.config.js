/**
 * NestJS 12 ships as ES modules, which Jest on Node 20 loads only in its native ESM mode
 * (`--experimental-vm-modules`, set by `npm test`). So tests are transpiled to ESM by ts-jest,
 * while the service itself builds to CommonJS (tsconfig.build.json) and loads Nest through
 * Node's require(esm).
 *
 * One project per tier (below). The suites in test/ run on real PostgreSQL (DATABASE_URL when set,
 * else an embedded one started once for the run by test/support/global-setup.cjs). Type checking
 * is `npm run typecheck`'s job.
 */
/**
 * ESM-only packages that a CommonJS dependency require()s (@fastify/static → content-disposition).
 * Node 20 loads those natively; Jest's CommonJS loader refuses, so each is mapped to a pass-through
 * in test/support/native/ that loads the real package with Node's own require.
 */
const ESM_REQUIRED_FROM_CJS = ['content-disposition'];

const tsJest = ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json', useESM: true }];

const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': tsJest,
  },
  moduleNameMapper: {
    ...Object.fromEntries(ESM_REQUIRED_FROM_CJS.map((name) => [`^${name}$`, `<rootDir>/test/support/native/${name}.cjs`])),
    // The typed client (clients/typescript, an ES module package) names its own modules as they are built (`./receipts.js`).
    '^\\./receipts\\.js$': '<rootDir>/clients/typescript/src/receipts.ts',
    '^\\./webhooks\\.js$': '<rootDir>/clients/typescript/src/webhooks.ts',
  },
};

/** The suites in test/ share one PostgreSQL for the run (test/support/global-setup.cjs starts it once). */
const onDatabase = {
  globalSetup: '<rootDir>/test/support/global-setup.cjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.cjs',
};

/**
 * One project per tier, named by the file's suffix: `npm run test:<tier>` runs one, `npm test` all.
 * - unit: `src/.../*.spec.ts`, beside the code (a class or function; in-memory fakes of its ports), and
 *   `test/contracts/*.spec.ts`, the fakes held to their ports' contracts (test/contracts/*.contract.ts);
 * - e2e: `test/e2e/*.e2e-spec.ts`, the real application over HTTP;
 * - medium: `test/medium/*.medium-spec.ts`, adapters and repositories against real PostgreSQL and the sandbox
 *   (port-contracts.medium-spec.ts runs the same contracts as the fakes);
 * - process: `test/process/*.process-spec.ts`, the built service and the CLIs as processes;
 * - static: `test/static/*.static-spec.ts`, files held to the code.
 */
/** @type {import('jest').Config} */
module.exports = {
  // e2e suites start applications and databases; a unit spec never comes near this.
  testTimeout: 60_000,
  // Test files run in a worker process that is replaced once its heap holds more than this after a file.
  // Jest's ES module mode (--experimental-vm-modules) keeps each file's module graph alive, so one
  // process grows all run long: with one worker Jest would otherwise run every file inside its own
  // process ("in band"), which reached 4 GB, its heap's limit, by the last files, and then spent
  // its time collecting garbage.
  workerIdleMemoryLimit: '1GB',
  // One file at a time, on any machine. Two at a time took 229-235 s against 408 s on two vCPUs,
  // but files then share more than their databases: the PostgreSQL cluster's oldest running
  // transaction (one file's holds back another's sealing: a receipts test polling for its proof
  // reached its rate limit in a CI run, 2026-11-29, since raised), ports picked free and then
  // released, and a Redis's keys.
  maxWorkers: 1,
  reporters: process.env.SUITE_PROGRESS ? ['default', '<rootDir>/test/support/suite-progress-reporter.cjs'] : ['default'],
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/dev/**/*.spec.ts', '<rootDir>/test/contracts/*.spec.ts'] },
    {
      ...shared,
      ...onDatabase,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/*.e2e-spec.ts'],
      // The shared-store suites (redis-*) need a Redis; .ci/run sets TEST_REDIS_URL where one answers.
      testPathIgnorePatterns: process.env.TEST_REDIS_URL ? [] : ['/redis-'],
    },
    { ...shared, ...onDatabase, displayName: 'medium', testMatch: ['<rootDir>/test/medium/*.medium-spec.ts'] },
    {
      ...shared,
      ...onDatabase,
      displayName: 'process',
      testMatch: ['<rootDir>/test/process/*.process-spec.ts'],
      testPathIgnorePatterns: process.env.TEST_REDIS_URL ? [] : ['/redis-'],
    },
    { ...shared, ...onDatabase, displayName: 'static', testMatch: ['<rootDir>/test/static/*.static-spec.ts'] },
  ],
};
