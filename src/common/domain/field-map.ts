/**
 * A payload's wire names, one per field of its domain type. Declare maps with
 * `satisfies FieldMap<T>`: a field added to T without a wire name does not compile, so no field
 * can be dropped silently between the partner, the domain and the provider.
 */
export type FieldMap<T> = { readonly [K in keyof Required<T>]: string };

/** The wire names a map gives (the DTO's and the provider's keys). */
export type WireName<M extends FieldMap<object>> = M[keyof M];

/**
 * `value` in wire names; fields that are undefined or null are left out (validation refuses null,
 * and should one slip through, the provider still never receives it).
 */
export function toWire<T extends object>(map: FieldMap<T>, value: T): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  for (const field of Object.keys(map) as (keyof T)[]) {
    if (value[field] !== undefined && value[field] !== null) wire[map[field]] = value[field];
  }
  return wire;
}

/** The domain value of a wire-named object (a validated DTO); fields that are absent stay absent. */
export function fromWire<T extends object>(map: FieldMap<T>, wire: object): T {
  const value: Partial<Record<keyof T, unknown>> = {};
  for (const field of Object.keys(map) as (keyof T)[]) {
    const carried = (wire as Record<string, unknown>)[map[field]];
    if (carried !== undefined) value[field] = carried;
  }
  return value as T;
}

/** True exactly when A and B are the same union (a compile-time check: assign it `true`). */
export type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
