import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../../src/partner-api/events/domain/event-types';

/** The rows of docs/events.md's catalogue: each event type, and the resource it names. */
function catalogue(): { type: string; resource: string }[] {
  const page = readFileSync(join(process.cwd(), 'docs', 'events.md'), 'utf8');
  return page
    .split('\n')
    .filter((line) => /^\| `[a-z_]+\.[a-z_]+` \|/.test(line))
    .map((line) => {
      const [type, resource] = line
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim());
      return { type: type.replaceAll('`', ''), resource: /^`([a-z_]+)`/.exec(resource)?.[1] ?? resource };
    });
}

describe('docs/events.md and the service’s event types', () => {
  it('when its catalogue is read, then it lists every type the service writes, once, in the order of the code, with the resource each names', () => {
    expect(catalogue()).toEqual(EVENT_TYPE_NAMES.map((type) => ({ type, resource: EVENT_TYPES[type].resource })));
  });

  it('when the migrations are read, then every type the outbox writes is one of the catalogue’s', () => {
    const written = new Set<string>();
    for (const file of [
      'src/partner-api/bank-accounts/persistence/postgres-bank-account.repository.ts',
      'src/partner-api/customers/persistence/postgres-customer-ownership.repository.ts',
      'src/partner-api/webhooks/persistence/postgres-delivery-jobs.repository.ts',
      'migrations/1765440000000-PartnerEvents.ts',
    ]) {
      const text = readFileSync(join(process.cwd(), file), 'utf8');
      for (const [, type] of text.matchAll(/'([a-z_]+\.[a-z_]+)',\s*'[a-z_]+',/g)) written.add(type);
    }
    expect([...written].sort()).toEqual([...EVENT_TYPE_NAMES].sort());
  });

  it('when the typed client’s event types are read, then they are the catalogue’s, each with its data typed', () => {
    const client = readFileSync(join(process.cwd(), 'clients', 'typescript', 'src', 'webhooks.ts'), 'utf8');
    const eventData = client.slice(client.indexOf('export interface EventData {'), client.indexOf('export type EventType'));
    const typed = [...eventData.matchAll(/^ {2}'([a-z_]+\.[a-z_]+)': \{/gm)].map(([, type]) => type);
    expect(typed).toEqual(EVENT_TYPE_NAMES);
  });
});
