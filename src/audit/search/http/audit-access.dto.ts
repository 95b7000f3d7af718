import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInstant } from '../../../common/http/date.validators';
import type { AccessByCustomer, AccessByPerson, AccessReport } from '../domain/audit-search.port';

export class AccessReportQueryDto {
  @ApiProperty({ description: 'The period’s start (inclusive): an ISO 8601 date or date-time.', example: '2026-07-01T00:00:00Z' })
  @IsInstant('from')
  readonly from!: string;

  @ApiProperty({ description: 'The period’s end (exclusive); at most 366 days after `from`.', example: '2026-10-01T00:00:00Z' })
  @IsInstant('to')
  readonly to!: string;
}

@ApiSchema({ name: 'AccessByPerson' })
export class AccessByPersonDto {
  @ApiProperty({ enum: ['staff', 'admin'], description: 'A staff member, or an admin client token (break-glass).', example: 'staff' })
  readonly caller_kind!: string;

  @ApiProperty({ description: 'The staff member’s stable id at the company’s provider, or the admin client’s id.', example: 'emp-4711' })
  readonly id!: string;

  @ApiPropertyOptional({ nullable: true, type: String, description: 'Their display name (or the admin client’s name).', example: 'Sam Support' })
  readonly name!: string | null;

  @ApiProperty({ description: 'Searches of the audit log in the period.', example: 42 })
  readonly searches!: number;

  @ApiProperty({ description: 'Of those, the searches that gave a reason.', example: 17 })
  readonly with_reason!: number;

  @ApiProperty({ description: 'Distinct customers searched for.', example: 9 })
  readonly customers!: number;

  @ApiProperty({ description: 'Distinct references searched for.', example: 8 })
  readonly references!: number;

  @ApiProperty({ example: '2026-07-02T08:01:12.000Z' })
  readonly first_at!: string;

  @ApiProperty({ example: '2026-09-29T16:45:03.000Z' })
  readonly last_at!: string;

  static from(person: AccessByPerson): AccessByPersonDto {
    return {
      caller_kind: person.callerKind,
      id: person.id,
      name: person.name ?? null,
      searches: person.searches,
      with_reason: person.withReason,
      customers: person.customers,
      references: person.references,
      first_at: person.firstAt.toISOString(),
      last_at: person.lastAt.toISOString(),
    };
  }
}

@ApiSchema({ name: 'CustomerViewer' })
export class CustomerLookerDto {
  @ApiProperty({ enum: ['staff', 'admin'], example: 'staff' })
  readonly caller_kind!: string;

  @ApiProperty({ example: 'emp-4711' })
  readonly id!: string;

  @ApiPropertyOptional({ nullable: true, type: String, example: 'Sam Support' })
  readonly name!: string | null;

  @ApiProperty({ example: 3 })
  readonly searches!: number;
}

@ApiSchema({ name: 'AccessByCustomer' })
export class AccessByCustomerDto {
  @ApiProperty({ format: 'uuid', example: '6a1f0d1e-8a55-4b0e-9c47-9d7b1f3a2c10' })
  readonly customer_id!: string;

  @ApiProperty({ description: 'Searches about the customer in the period.', example: 4 })
  readonly searches!: number;

  @ApiProperty({ type: [CustomerLookerDto], description: 'Who searched, most searches first.' })
  readonly people!: CustomerLookerDto[];

  static from(customer: AccessByCustomer): AccessByCustomerDto {
    return {
      customer_id: customer.customerId,
      searches: customer.searches,
      people: customer.people.map((person) => ({ caller_kind: person.callerKind, id: person.id, name: person.name ?? null, searches: person.searches })),
    };
  }
}

@ApiSchema({ name: 'AccessReport' })
export class AccessReportResponseDto {
  @ApiProperty({ example: '2026-07-01T00:00:00.000Z' })
  readonly from!: string;

  @ApiProperty({ example: '2026-10-01T00:00:00.000Z' })
  readonly to!: string;

  @ApiProperty({
    description: 'More people or customers than listed (1,000 of each) searched or were searched for in the period: ask for a shorter one.',
    example: false,
  })
  readonly truncated!: boolean;

  @ApiProperty({ type: [AccessByPersonDto], description: 'Each person whose searches of the audit log were answered, most searches first (at most 1,000).' })
  readonly people!: AccessByPersonDto[];

  @ApiProperty({ type: [AccessByCustomerDto], description: 'Each customer searched for, most searches first (at most 1,000).' })
  readonly customers!: AccessByCustomerDto[];

  static from(from: Date, to: Date, report: AccessReport): AccessReportResponseDto {
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      truncated: report.truncated,
      people: report.people.map((person) => AccessByPersonDto.from(person)),
      customers: report.customers.map((customer) => AccessByCustomerDto.from(customer)),
    };
  }
}
