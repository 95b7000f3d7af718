/**
 * The boundaries of docs/architecture.md, checked by `npm run lint` (dependency-cruiser, because it
 * sees the whole import graph: folder rules and cycles, which per-file lint rules cannot).
 */
/**
 * Where processes start: everything else in src/ and dev/ must be reachable from one of them. The
 * service's (src/main.ts, the commands, the TypeORM data source) and development's (dev/main.ts,
 * `npm start`; the sandbox; the users and OpenAPI commands; the preload the npm commands use).
 */
const ENTRY_POINTS = '^src/(main|worker|data-source)[.]ts$|^dev/(main|local-database|sandbox/main|openapi[.]cli)[.]ts$|[.]cli[.]ts$';
/** The features: each folder under src/, and each slice of the partner API (partner-api/customers, …) as one of its own. */
const FEATURES = '(audit|auth|health|idempotency|metrics|partner-api/[^/]+|rate-limit|upstream)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'service-never-reaches-development-tooling',
      comment:
        'src/ is the service, and what the production image holds: it imports nothing from dev/ (the sandbox, the development ' +
        'OpenID provider, the embedded PostgreSQL, demo data, the web app). Development tooling hands the service what it adds ' +
        '(its OpenID providers through the configuration, its routes through createApp, offerLocalDatabase) from its own entry points.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^dev/' },
    },
    {
      name: 'service-needs-no-development-package',
      comment: 'The production image installs dependencies only (npm ci --omit=dev): src/ imports no devDependency, not even for its types.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-framework-internals',
      comment:
        'A framework is used as documented: nothing imports from its internal paths (@nestjs/core/<folder>/…, @nestjs/common/constants, ' +
        '@nestjs/common/enums/…, @nestjs/platform-fastify/constants), which a release may change without notice. What a route needs ' +
        'is a guard, an interceptor, a filter, a pipe or a decorator Nest documents.',
      severity: 'error',
      from: { path: '^(src|dev)/' },
      to: {
        path: [
          '^node_modules/@nestjs/core/(?!index[.]js$|package[.]json$)[^/]+/',
          '^node_modules/@nestjs/common/(constants|enums/)',
          '^node_modules/@nestjs/platform-fastify/constants',
        ],
      },
    },
    {
      name: 'domain-is-pure',
      comment: 'Domain code depends on ports, never on a framework’s I/O or on an adapter.',
      severity: 'error',
      from: { path: ['^src/[^/]+/domain/', '^src/[^/]+/[^/]+/domain/'] },
      to: {
        path: [
          '^node_modules/(typeorm|@nestjs/typeorm|pg|pg-[^/]+|undici|fastify|@fastify/[^/]+|@nestjs/swagger|@nestjs/platform-fastify|ioredis|prom-client)/',
          '^src/[^/]+/(http|persistence|cli|provider)/',
          '^src/[^/]+/[^/]+/(http|persistence|cli|provider)/',
          '^src/upstream/',
        ],
      },
    },
    {
      name: 'lower-layers-know-no-feature',
      comment: 'common/, config/ and database/ serve the features; the composition root (src/*.ts) wires them.',
      severity: 'error',
      from: { path: '^src/(common|config|database)/' },
      to: { path: `^src/${FEATURES}/` },
    },
    {
      name: 'only-provider-adapters-speak-the-protocol',
      comment:
        'The provider’s protocol (src/upstream/: its client, signer, cipher and answers) is spoken by the partner API’s provider ' +
        'adapters (partner-api/<slice>/provider/) alone; the composition root starts it. No other feature reaches it.',
      severity: 'error',
      from: { path: `^src/${FEATURES}/`, pathNot: ['^src/upstream/', '^src/partner-api/[^/]+/provider/'] },
      to: { path: '^src/upstream/' },
    },
    {
      name: 'features-meet-through-domain-or-module',
      comment:
        'A feature uses another through its domain/ (services, ports, types), its module, or the decorators its http/ offers ' +
        '(@Roles, @Public, @CurrentClient), never through its other adapters. A command-line tool (cli/) wires adapters as the composition root does.',
      severity: 'error',
      from: { path: `^src/${FEATURES}/`, pathNot: `^src/${FEATURES}/cli/` },
      to: {
        path: `^src/${FEATURES}/`,
        pathNot: [
          '^src/$1/',
          '^src/partner-api/domain/',
          // The provider's protocol: who may speak it is the rule above's.
          '^src/upstream/',
          `^src/${FEATURES}/domain/`,
          `^src/${FEATURES}/[^/]+/domain/`,
          `^src/${FEATURES}/[^/]+[.]module[.]ts$`,
          `^src/${FEATURES}/[^/]+/[^/]+[.]module[.]ts$`,
          `^src/${FEATURES}/http/[^/]+[.]decorators[.]ts$`,
        ],
      },
    },
    {
      name: 'one-place-identifies-callers',
      comment:
        'Who is calling is decided once for every request, by the edge’s identify stage (src/auth/http/identify.stage.ts): ' +
        'nothing else asks the Authenticator. The module provides it, the pipeline builds the stage with it.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: [
          '^src/auth/http/identify[.]stage[.]ts$',
          '^src/auth/http/presented-credentials[.]ts$',
          '^src/auth/auth[.]module[.]ts$',
          '^src/edge[.]pipeline[.]ts$',
          '^src/auth/domain/authenticator[.]ts$',
        ],
      },
      to: { path: '^src/auth/domain/authenticator[.]ts$' },
    },
    {
      name: 'no-unused-files',
      comment:
        'A file no entry point reaches is dead: the entry points are the service, the sandbox, the command-line tools, the OpenAPI export and the TypeORM data source.',
      severity: 'error',
      from: { path: ENTRY_POINTS },
      to: { path: '^(src|dev)/', pathNot: [ENTRY_POINTS, '[.]d[.]ts$', '^dev/web-app/[^/]+[.]js$'], reachable: false },
    },
    {
      name: 'no-circular-folders',
      comment: 'Two folders that import each other are one module in disguise; cut the cycle.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src|dev)/' },
      to: { circular: true },
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one; cut it.',
      severity: 'error',
      from: { path: '^(src|dev)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Packages are matched by their path under node_modules, also where node_modules is a link.
    preserveSymlinks: true,
    includeOnly: '^(src|dev|node_modules)/',
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
