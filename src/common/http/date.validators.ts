import { Injectable } from '@nestjs/common';
import { registerDecorator, ValidationArguments, ValidationOptions, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';
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
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      constraints: [options?.todayAllowed ? 'today-allowed' : 'before-today'],
      validator: PastCalendarDateConstraint,
    });
}

/** This date field comes strictly before another date field of the same object (when both are real dates). */
export function IsBeforeDateField(other: string, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
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
    });
}
