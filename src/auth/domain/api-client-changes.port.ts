/**
 * Says when any API client may have changed (created, revoked, its expiry moved, deleted), so that a
 * client remembered in memory is never trusted past a change to it.
 */
export abstract class ApiClientChanges {
  /** True while every change is being reported; false while the feed is down: nothing may be remembered then. */
  abstract get live(): boolean;
  /** `listener` is called on every change, and whenever `live` changes. */
  abstract subscribe(listener: () => void): void;
}

/** For tools that run once (the command line): no feed, so nothing is remembered. */
export class NoApiClientChanges extends ApiClientChanges {
  get live(): boolean {
    return false;
  }
  subscribe(): void {}
}
