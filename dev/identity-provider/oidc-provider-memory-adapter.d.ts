/**
 * oidc-provider's own in-memory adapter, which its default (no `adapter`) uses too. Passed
 * explicitly (dev-identity-provider.ts), it skips the warning meant for a production provider that
 * forgot its adapter: this one exists only for development, and is in memory by design.
 */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { AdapterFactory } from 'oidc-provider';
  export function createMemoryAdapter(clockTolerance?: number): AdapterFactory;
}
