import { applyDecorators, Injectable } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import {
  IsISO8601,
  Matches,
  registerDecorator,
  ValidationArguments,
  ValidationOptions,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { parseCalendarDate, utcDate } from '../domain/calendar-date';
import { Clock } from '../domain/clock.port';

/** No date before this is a date of birth or an issue date (the provider's floor as well). */
export const EARLIEST_DATE = '1900-01-01';

/**
 * `YYYY-MM-DD`, a date that exists, from EARLIEST_DATE, and before today (UTC, from the Clock) —
 * or, with `todayAllowed`, not after today.
 */
@ValidatorConstraint({ name: 'isPastCalendarDate' })
@Injectable()
export class PastCalendarDateConstraint implements ValidatorConstraintInterface {
  constructor(private readonly clock: Clock) {}

  validate(value: unknown, args?: ValidationArguments): boolean {
    if (typeof value !== 'string' || parseCalendarDate(value) === undefined || value < EARLIEST_DATE) return false;
    const today = utcDate(this.clock.now());
    return args?.constraints?.[0] === 'today-allowed' ? value <= today : value < today;
  }

  defaultMessage(args?: ValidationArguments): string {
    if (parseCalendarDate(args?.value) === undefined) return `${args?.property} must be a real date in YYYY-MM-DD form`;
    if ((args?.value as string) < EARLIEST_DATE) return `${args?.property} must be on or after ${EARLIEST_DATE}`;
    return args?.constraints?.[0] === 'today-allowed' ? `${args?.property} must not be in the future` : `${args?.property} must be in the past`;
  }
}

export function IsPastCalendarDate(options?: ValidationOptions & { todayAllowed?: boolean }): PropertyDecorator {
  return applyDecorators(
    dateRules({ 'x-minimum-date': EARLIEST_DATE, 'x-maximum-date': options?.todayAllowed ? 'today' : 'today-P1D' }),
    (target: object, propertyName: string | symbol) =>
      registerDecorator({
        target: target.constructor,
        propertyName: propertyName as string,
        options,
        constraints: [options?.todayAllowed ? 'today-allowed' : 'before-today'],
        validator: PastCalendarDateConstraint,
      }),
  );
}

/**
 * What JSON Schema cannot say of a date, said in the OpenAPI document where a client can read it
 * (docs/api-contract.md, "Rules beyond JSON Schema"): `x-minimum-date` and `x-maximum-date` (a
 * date, `today`, or `today` plus or minus an ISO 8601 period of days or months, UTC; a day the
 * month lacks becomes its last day), and `x-before-field` (another date field of the same body).
 */
export function dateRules(rules: Partial<Record<'x-minimum-date' | 'x-maximum-date' | 'x-before-field', string>>): PropertyDecorator {
  return ApiProperty({ format: 'date', ...rules });
}

/** This date field comes strictly before another date field of the same object (when both are real dates). */
export function IsBeforeDateField(other: string, options?: ValidationOptions): PropertyDecorator {
  return applyDecorators(dateRules({ 'x-before-field': other }), (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isBeforeDateField',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      options: { message: `$property must be before ${other}`, ...options },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const later = (args.object as Record<string, unknown>)[other];
          if (parseCalendarDate(value) === undefined || parseCalendarDate(later) === undefined) return true; // reported by their own rules
          return (value as string) < (later as string);
        },
      },
    }),
  );
}

/**
 * An instant as a query names one: a calendar date (its midnight UTC) or a date-time with a zone,
 * ISO 8601's extended form only. Week dates (`2026-W01-1`) and ordinal dates (`2026-183`), which
 * ISO 8601 allows and JavaScript's Date cannot read, are refused here rather than read as no date.
 */
export function IsInstant(field: string): PropertyDecorator {
  const message = `${field} must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T09:30:00Z`;
  // A date or a date-time: neither JSON Schema format alone, so the document says it by the pattern.
  const instant = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:[0-9]{2}))?$/;
  return applyDecorators(
    ApiProperty({ type: 'string', pattern: instant.source }),
    IsISO8601({ strict: true, strictSeparator: true }, { message }),
    Matches(instant, { message }),
  );
}
