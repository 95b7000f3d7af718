// Preloaded by the npm commands (node --require ./scripts/local-database.cjs …): in a checkout,
// where development tooling is built (dist/dev/), it offers the embedded PostgreSQL for when
// DATABASE_URL is not set (dev/local-database.ts). In the production image there is no dist/dev/,
// nothing is offered, and the commands need DATABASE_URL, as the service does.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const offer = join(__dirname, '..', 'dist', 'dev', 'local-database.js');
if (existsSync(offer)) require(offer);
