import { offerLocalDatabase } from '../src/database/database-handle';
import { acquireEmbeddedDatabase } from './database/embedded-postgres';
import { readDevelopmentEnvironment } from './development.environment';

/**
 * Loaded first by `npm start` (dev/main.ts) and by the npm commands of a checkout
 * (scripts/local-database.cjs): where DATABASE_URL is not set, the embedded PostgreSQL kept under
 * DATA_DIR is the database, started or joined. The production image has no dev/, so nothing
 * offers it there.
 */
offerLocalDatabase((config, log) => acquireEmbeddedDatabase({ dataDir: config.DATA_DIR, port: readDevelopmentEnvironment().EMBEDDED_PG_PORT, log }));
