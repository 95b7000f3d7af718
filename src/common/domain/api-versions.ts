/**
 * The API's versions, each named by its date (docs/api-contract.md, "Versions"): a request names the
 * one it is written for in `Gateway-Version`, a client is pinned to one when it is made, and every
 * answer says which it was answered under. Within /api/v1 no version has broken another yet.
 */
export const API_VERSIONS = ['2026-12-01'] as const;

export type ApiVersion = (typeof API_VERSIONS)[number];

/** The newest version: what a new client is pinned to, and what an end user's or staff member's request is answered under. */
export const CURRENT_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1];

/** The request and response header that names a version. */
export const API_VERSION_HEADER = 'Gateway-Version';

export function isApiVersion(value: unknown): value is ApiVersion {
  return typeof value === 'string' && (API_VERSIONS as readonly string[]).includes(value);
}

/**
 * The version a request is answered under: the one it names (`asked`, its Gateway-Version), else
 * its caller's pinned one, else the current one. Undefined when it names one this gateway does not
 * know (or several): never answered under another.
 */
export function answeredVersion(asked: unknown, pinned: ApiVersion | undefined): ApiVersion | undefined {
  if (asked === undefined) return pinned ?? CURRENT_API_VERSION;
  return isApiVersion(asked) ? asked : undefined;
}
