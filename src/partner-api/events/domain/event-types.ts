/**
 * The events a partner hears of (docs/events.md is their catalogue, held to this list by a test).
 * Each names the resource it is about; its `data` is thin (ids and status: read the resource for
 * more), with the resource as it then stood in `data.object` for an endpoint that asks for it.
 */
export const EVENT_TYPES = {
  'customer.created': { resource: 'customer', about: 'A customer was created for your tenant (or given to it by support after an unknown outcome).' },
  'customer.assigned': { resource: 'customer', about: 'One of your customers was bound to one of your end users.' },
  'bank_account.created': { resource: 'bank_account', about: 'A bank account was opened for one of your customers.' },
  'request.outcome_unknown': {
    resource: 'request',
    about: 'A customer creation or an account opening got no answer from the provider: its outcome is unknown until it is settled.',
  },
  'webhook_endpoint.disabled': {
    resource: 'webhook_endpoint',
    about: 'One of your webhook endpoints was disabled: it answered 410 Gone, or every attempt to it failed for 5 days.',
  },
} as const;

export type EventType = keyof typeof EVENT_TYPES;
export type ResourceType = (typeof EVENT_TYPES)[EventType]['resource'];

export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

export const isEventType = (value: string): value is EventType => Object.hasOwn(EVENT_TYPES, value);
