/** Seals secrets at rest (authenticated encryption), each to its context: a sealed value opens only where it was sealed. */
export abstract class SealedBox {
  abstract seal(value: object, context: string): Promise<string>;
  /** @throws when the value was not sealed with this key for this context. */
  abstract open<T>(sealed: string, context: string): Promise<T>;
}

/** The box partners' data is sealed in at rest (DATA_KEY): bank accounts' identifiers, and the answers kept to replay. */
export abstract class DataBox extends SealedBox {
  /** The key values are sealed under from now on, by its id: a value sealed under another is sealed again. */
  abstract get keyId(): string;
  /** The ids of the keys it had before (DATA_PREVIOUS_KEYS): what is sealed under them is sealed again under the current one. */
  abstract get previousKeyIds(): string[];
}
