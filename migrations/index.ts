import { CreateApiClients1763712000000 } from './1763712000000-CreateApiClients';

/**
 * Every migration, oldest first. Listed rather than globbed so the same list works compiled,
 * under Jest and from the CLI. `npm run migration:generate -- Name` writes a new file: add it here.
 */
export const MIGRATIONS = [CreateApiClients1763712000000];
