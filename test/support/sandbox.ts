import type { JournalEntry } from '../../dev/sandbox/sandbox.server';
import type { FaultSpec } from '../../dev/sandbox/sandbox-faults';
import type { RunningSandbox } from '../../dev/sandbox/sandbox.runner';

export async function injectFault(sandbox: RunningSandbox, fault: FaultSpec): Promise<void> {
  const response = await fetch(`${sandbox.baseUrl}/__sandbox/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fault),
  });
  if (response.status !== 201) throw new Error(`fault refused: ${await response.text()}`);
}

export async function clearSandbox(sandbox: RunningSandbox): Promise<void> {
  await fetch(`${sandbox.baseUrl}/__sandbox/faults`, { method: 'DELETE' });
  await fetch(`${sandbox.baseUrl}/__sandbox/requests`, { method: 'DELETE' });
}

export async function journal(sandbox: RunningSandbox): Promise<JournalEntry[]> {
  const response = await fetch(`${sandbox.baseUrl}/__sandbox/requests`);
  return ((await response.json()) as { requests: JournalEntry[] }).requests;
}
