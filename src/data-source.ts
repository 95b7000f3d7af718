import { DataSource } from 'typeorm';
import { dataSourceOptions } from './database/typeorm-options';
import { ENTITIES } from './entities';

/**
 * For the TypeORM CLI, which `npm run migration:generate` drives with DATABASE_URL pointing at the
 * database it resolved (the embedded one by default).
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL must be set for the TypeORM CLI; use `npm run migration:generate`.');

export default new DataSource(dataSourceOptions(url, { entities: ENTITIES }));
