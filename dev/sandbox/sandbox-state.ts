import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface SandboxCustomer {
  readonly id: string;
  readonly reference: string;
  readonly createdAt: string;
}

export type SandboxAccount = Record<string, unknown> & { readonly id: string; readonly reference: string };

type Line = { readonly customer: SandboxCustomer } | { readonly account: SandboxAccount };

/**
 * What the sandbox provider holds: its customers, their accounts, and every reference it has seen.
 * In memory, and, when given a file, kept there too (one JSON line per thing made, appended before
 * the answer is sent), so that a restarted sandbox knows what it made before. A fresh DATA_DIR is
 * a fresh sandbox. A line cut short by a crash is skipped: its request was never answered.
 */
export class SandboxState {
  readonly customers = new Map<string, SandboxCustomer>();
  readonly accounts = new Map<string, SandboxAccount>();
  readonly references = new Set<string>();

  private constructor(private readonly file: string | undefined) {}

  static inMemory(): SandboxState {
    return new SandboxState(undefined);
  }

  /** The state kept in `file` (made, with its directory, when missing). */
  static kept(file: string): SandboxState {
    const state = new SandboxState(file);
    if (existsSync(file)) {
      for (const text of readFileSync(file, 'utf8').split('\n')) {
        const line = parse(text);
        if (line) state.apply(line);
      }
    } else {
      mkdirSync(dirname(file), { recursive: true });
    }
    return state;
  }

  /** Whether the provider has not seen this reference; it is taken by the customer or account made with it. */
  isNewReference(reference: string): boolean {
    return !this.references.has(reference);
  }

  addCustomer(customer: SandboxCustomer): void {
    this.keep({ customer });
  }

  addAccount(account: SandboxAccount): void {
    this.keep({ account });
  }

  private keep(line: Line): void {
    if (this.file) appendFileSync(this.file, JSON.stringify(line) + '\n', { mode: 0o600 });
    this.apply(line);
  }

  private apply(line: Line): void {
    if ('customer' in line) {
      this.customers.set(line.customer.id, line.customer);
      this.references.add(line.customer.reference);
    } else {
      this.accounts.set(line.account.id, line.account);
      this.references.add(line.account.reference);
    }
  }
}

function parse(text: string): Line | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value = JSON.parse(text) as Partial<{ customer: SandboxCustomer; account: SandboxAccount }>;
    if (value.customer && typeof value.customer.id === 'string' && typeof value.customer.reference === 'string') return { customer: value.customer };
    if (value.account && typeof value.account.id === 'string' && typeof value.account.reference === 'string') return { account: value.account };
  } catch {
    // A line cut short by a crash.
  }
  return undefined;
}
