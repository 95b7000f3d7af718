export interface Balance {
  readonly customerId: string;
  readonly currency: string;
  /** Decimal strings, as the provider sends them: never floats. */
  readonly available: string;
  readonly current: string;
  readonly asOf: string | null;
}

export abstract class BalanceGateway {
  /** The customer's balance. Throws UpstreamError; kind `not_found` when the provider knows no such customer. */
  abstract read(customerId: string): Promise<Balance>;
}
