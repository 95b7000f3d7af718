import { Injectable } from '@nestjs/common';
import { registerDecorator, ValidationArguments, ValidationOptions, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';
import { parseCalendarDate, utcDate } from './calendar-date';
import { Clock } from './clock.port';

/** `YYYY-MM-DD`, a date that exists, strictly before today (UTC, from the Clock). */
@ValidatorConstraint({ name: 'isPastCalendarDate' })
@Injectable()
export class PastCalendarDateConstraint implements ValidatorConstraintInterface {
  constructor(private readonly clock: Clock) {}

  validate(value: unknown): boolean {
    return typeof value === 'string' && parseCalendarDate(value) !== undefined && value < utcDate(this.clock.now());
  }

  defaultMessage(args?: ValidationArguments): string {
    return parseCalendarDate(args?.value) === undefined
      ? `${args?.property} must be a real date in YYYY-MM-DD form`
      : `${args?.property} must be in the past`;
  }
}

export function IsPastCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({ target: target.constructor, propertyName: propertyName as string, options, validator: PastCalendarDateConstraint });
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
