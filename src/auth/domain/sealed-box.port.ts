/** Seals secrets at rest (authenticated encryption), each to its context: a sealed value opens only where it was sealed. */
export abstract class SealedBox {
  abstract seal(value: object, context: string): Promise<string>;
  /** @throws when the value was not sealed with this key for this context. */
  abstract open<T>(sealed: string, context: string): Promise<T>;
}
