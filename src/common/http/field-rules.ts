import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsISO31661Alpha2, IsString, IsUUID, Matches, MaxLength, registerDecorator, ValidationArguments } from 'class-validator';

/** Shared shapes of partner-facing fields; docs/field-rules.md is their table. */
export const E164_PHONE = /^\+?[1-9][0-9]{6,14}$/;
export const E164_MESSAGE = '$property must be digits with the country prefix (7 to 15 digits, optional leading +)';
export const UUID_MESSAGE = '$property must be a UUID';
export const COUNTRY_MESSAGE = '$property must be an upper-case ISO 3166-1 alpha-2 country code such as DE or GB';
/** An address with one @, a dot in its domain, and no white space (what the provider checks). */
export const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/**
 * EMAIL_SHAPE as the OpenAPI document says it: JavaScript's \s written out (every engine reads
 * `\s` its own way: Go's and Java's miss the no-break and line separators).
 */
const JS_WHITE_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const EMAIL_PATTERN = `^[^@${JS_WHITE_SPACE}]+@[^@${JS_WHITE_SPACE}]+\\.[^@${JS_WHITE_SPACE}]+$`;
/** The UUIDs class-validator's IsUUID('all') takes (versions 1-8 of the RFC 9562 variant, nil and max), in any case. */
const UUID_PATTERN =
  '^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-[fF]{12})$';
export const EMAIL_MESSAGE = '$property must be an email address';
export const MAX_EMAIL_LENGTH = 254;

/**
 * A field's rules, checked in the order given: the first that fails is the field's one message.
 * (Decorators stacked on a property run bottom to top in class-validator; listed here, they run as
 * they read.)
 */
export function Rules(...rules: PropertyDecorator[]): PropertyDecorator {
  return applyDecorators(...rules);
}

const lowerCase = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value);
const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** Digits with the country prefix (E.164), a leading + optional. */
export function IsPhoneNumber(): PropertyDecorator {
  return Rules(ApiProperty({ pattern: E164_PHONE.source }), IsString(), Matches(E164_PHONE, { message: E164_MESSAGE }));
}

/**
 * An email address: a string of printable characters first (a lone surrogate would make the email
 * check itself throw), then its length, then the shape the provider checks, then a full check.
 */
export function IsEmailAddress(): PropertyDecorator {
  return Rules(
    ApiProperty({ format: 'email', pattern: EMAIL_PATTERN, maxLength: MAX_EMAIL_LENGTH }),
    IsString(),
    HasNoControlCharacters(),
    MaxLength(MAX_EMAIL_LENGTH, { message: `$property must be at most ${MAX_EMAIL_LENGTH} characters` }),
    Matches(EMAIL_SHAPE, { message: EMAIL_MESSAGE }),
    IsEmail({}, { message: EMAIL_MESSAGE }),
  );
}

/** A UUID in either case, passed on in lower case: one spelling per identifier everywhere. */
export function IsUuidField(message = UUID_MESSAGE): PropertyDecorator {
  return applyDecorators(ApiProperty({ format: 'uuid', pattern: UUID_PATTERN }), Transform(lowerCase), IsUUID('all', { message }));
}

/** An assigned ISO 3166-1 alpha-2 code, upper case only (the provider refuses `de`). */
export function IsCountryCode(): PropertyDecorator {
  return Rules(
    ApiProperty({ pattern: '^[A-Z]{2}$' }),
    IsString(),
    Matches(/^[A-Z]{2}$/, { message: COUNTRY_MESSAGE }),
    IsISO31661Alpha2({ message: COUNTRY_MESSAGE }),
  );
}

/**
 * Characters no text field may hold: control characters (C0, DEL, C1), lone surrogates, and line
 * or paragraph separators.
 */
const FORBIDDEN_TEXT = /[\p{Cc}\p{Zl}\p{Zp}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;
const VISIBLE = /[\p{L}\p{N}]/u;
const CONTROL_MESSAGE = 'must not contain control characters';

/** No control character, line or paragraph separator, or lone surrogate (for a string; others pass to their own rules). */
function HasNoControlCharacters(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasNoControlCharacters',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property ${CONTROL_MESSAGE}` },
      validator: { validate: (value: unknown) => typeof value !== 'string' || !FORBIDDEN_TEXT.test(value) },
    });
}

/** Why a text is not acceptable, or undefined. Length in UTF-16 code units, as the provider counts. */
export function textProblem(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (FORBIDDEN_TEXT.test(value)) return CONTROL_MESSAGE;
  if (value.trim() !== value) return 'must not start or end with white space';
  if (value.length === 0 || !VISIBLE.test(value)) return 'must contain a letter or a digit';
  if (value.length > max) return `must be at most ${max} characters (UTF-16 code units; an emoji counts as two)`;
  return undefined;
}

/**
 * Free text (names, document fields, address lines): trimmed, then printable, with a letter or a
 * digit, and at most `max` UTF-16 code units.
 */
export function IsPrintableText(max: number): PropertyDecorator {
  return applyDecorators(
    // What JSON Schema cannot say: trimmed first, then a letter or a digit, no control character, and
    // the length in UTF-16 code units (an emoji counts two), where maxLength counts code points.
    ApiProperty({ 'x-text-rules': { trimmed: true, needs: 'a letter or a digit', control_characters: false, max_utf16_length: max } } as object),
    Transform(trimmed),
    (target: object, propertyName: string | symbol) =>
      registerDecorator({
        name: 'isPrintableText',
        target: target.constructor,
        propertyName: propertyName as string,
        constraints: [max],
        validator: {
          validate: (value: unknown) => textProblem(value, max) === undefined,
          defaultMessage: (args?: ValidationArguments) => `${args?.property} ${textProblem(args?.value, max) ?? 'is invalid'}`,
        },
      }),
  );
}

/** A whole non-negative decimal number from a query string; anything else (`0x10`, `1e3`, `16abc`) stays a string and fails @IsInt. */
export function toDecimalInteger({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;
}
