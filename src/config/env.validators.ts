import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min, registerDecorator, ValidationOptions } from 'class-validator';
import { readUpstreamPublicKey } from './upstream-public-key';

/** The environment schema's own validators: each names the variable, none echoes its value. */

/** Accepts true/false/1/0/yes/no; anything else is left as is so that @IsBoolean names it. */
function toBoolean({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string') return value;
  const normalised = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalised)) return true;
  if (['false', '0', 'no', 'off'].includes(normalised)) return false;
  return value;
}

/** Integers only: "12abc" or "1.5" stay strings and fail @IsInt instead of being half-parsed. */
function toInteger({ value }: { value: unknown }): unknown {
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return value;
}

/** A true/false variable (true/false, 1/0, yes/no, on/off). */
export function IsFlag(): PropertyDecorator {
  return applyDecorators(Transform(toBoolean), IsBoolean());
}

/** An integer variable within [min, max]; half-numeric strings are refused, not truncated. */
export function IsIntegerBetween(min: number, max: number): PropertyDecorator {
  return applyDecorators(Transform(toInteger), IsInt(), Min(min), Max(max));
}

export function IsUrlWithProtocol(protocols: string[], options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isUrlWithProtocol',
      target: target.constructor,
      propertyName,
      options: {
        message: `$property must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
        ...options,
      },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string') return false;
          try {
            return protocols.includes(new URL(value).protocol);
          } catch {
            return false;
          }
        },
      },
    });
}

const environmentOf = (object: object | undefined): Record<string, unknown> => (object ?? {}) as Record<string, unknown>;

/**
 * A variable that `read` must accept, given the whole environment for rules that depend on another
 * variable (NODE_ENV); its error, which never echoes the value, is the message.
 */
export function IsReadableBy(read: (value: string, env: Record<string, unknown>) => unknown, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isReadableBy',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate(value: unknown, args) {
          if (typeof value !== 'string') return false;
          try {
            read(value, environmentOf(args?.object));
            return true;
          } catch {
            return false;
          }
        },
        defaultMessage(args) {
          if (typeof args?.value !== 'string') return '$property is required';
          try {
            read(args.value, environmentOf(args.object));
            return '$property is invalid';
          } catch (error) {
            return `$property ${(error as Error).message}`;
          }
        },
      },
    });
}

export function IsUpstreamPublicKey(options?: ValidationOptions) {
  return IsReadableBy(readUpstreamPublicKey, options);
}
