import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { migrateAsOwner } from '../database-roles';
import { dataSourceOptions } from '../typeorm-options';
import { openDatabase, setUpCommandLineProcess } from './open-database';

/**
 * npm run migration:run | migration:revert | migration:generate -- Name
 * Works against DATABASE_URL, or the embedded PostgreSQL (joined if the service is running), as
 * the schema's owner (MIGRATIONS_DATABASE_URL) when there is one: `run` also grants DATABASE_URL's
 * role its privileges.
 */
async function main(command: string | undefined, name: string | undefined): Promise<number> {
  if (command === 'generate' && !(name && /^[A-Z][A-Za-z0-9]*$/.test(name))) {
    process.stderr.write('Usage: npm run migration:generate -- NameInPascalCase\n');
    return 2;
  }
  if (!['run', 'revert', 'generate'].includes(command ?? '')) {
    process.stderr.write('Usage: migrate.cli.js run | revert | generate Name\n');
    return 2;
  }
  const database = await openDatabase(process.env, { migrate: false });
  try {
    if (command === 'run' || command === 'generate') {
      const applied = await migrateAsOwner(database.dataSource, database.handle.ownerUrl, { auditRetentionDays: database.config.AUDIT_RETENTION_DAYS });
      process.stderr.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'No pending migrations.\n');
    }
    if (command === 'revert') {
      const owner = database.handle.ownerUrl
        ? await new DataSource(dataSourceOptions(database.handle.ownerUrl, { poolSize: 2 })).initialize()
        : database.dataSource;
      try {
        await owner.undoLastMigration({ transaction: 'each' });
      } finally {
        if (owner !== database.dataSource) await owner.destroy();
      }
      process.stderr.write('Reverted the last migration.\n');
    }
    if (command === 'generate') {
      // TypeORM's own generator, pointed at the database we resolved.
      const result = spawnSync(
        process.execPath,
        [
          require.resolve('typeorm/cli.js'),
          'migration:generate',
          '--pretty',
          '-d',
          join(__dirname, '..', '..', 'data-source.js'),
          join(process.cwd(), 'migrations', name!),
        ],
        { stdio: 'inherit', env: { ...process.env, DATABASE_URL: database.handle.ownerUrl ?? database.handle.url } },
      );
      if (result.status === 0) process.stderr.write('Now add the new class to migrations/index.ts.\n');
      return result.status ?? 1;
    }
    return 0;
  } finally {
    await database.close();
  }
}

setUpCommandLineProcess();
main(process.argv[2], process.argv[3]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`migrate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
