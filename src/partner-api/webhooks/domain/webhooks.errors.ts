import { DomainError } from '../../../common/domain/domain-error';

/** Another tenant's endpoint looks like none. */
export class WebhookEndpointNotFound extends DomainError {
  constructor() {
    super('WEBHOOK_ENDPOINT.NOT_FOUND');
  }
}

/** A URL the service will not send to: not https in production, or one that resolves to a private, loopback or link-local address. */
export class WebhookUrlRefused extends DomainError {
  constructor(reason: string) {
    super('WEBHOOK_ENDPOINT.URL_REFUSED', `The endpoint's URL is refused: ${reason}`, { fields: [{ field: 'url', message: reason }] });
  }
}

/** An event the endpoint was never sent (not its tenant's, or not one of its types). */
export class DeliveryNotFound extends DomainError {
  constructor() {
    super('WEBHOOK_ENDPOINT.DELIVERY_NOT_FOUND');
  }
}
