/** Shared shapes of partner-facing fields. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any UUID, any version, either case. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
export const E164_PHONE = /^\+?[1-9]\d{6,14}$/;
export const E164_MESSAGE = '$property must be digits with the country prefix (7 to 15 digits, optional leading +)';
export const UUID_MESSAGE = '$property must be a UUID';
export const COUNTRY_MESSAGE = '$property must be an ISO 3166-1 alpha-2 country code such as DE or GB';
