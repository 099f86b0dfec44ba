import { INTEGRATOR_WEBHOOK_KINDS, UTILITY_WEBHOOK_KINDS, type WebhookEventTypeName } from '@efs/api';
import { integratorOf, utilityOf } from '@efs/access';
import type { Principal } from '@efs/contracts';
import { Errors } from '@efs/errors';
import type { Tenant } from './messages.ts';

/** Whose subscriptions and messages a request reaches: a client token's integrator or a utility key's utility. */
export function tenantOf(p: Principal): Tenant {
  if (p.kind === 'UTILITY') return { kind: 'utility', id: utilityOf(p) };
  if (p.kind === 'CLIENT') return { kind: 'integrator', id: integratorOf(p) };
  throw Errors.FORBIDDEN('Webhooks take a client token or a utility API key');
}

/** The kinds a tenant's subscription may name; another audience's kind answers 400 naming it. */
export function checkEventTypes(tenant: Tenant, eventTypes: readonly WebhookEventTypeName[]): WebhookEventTypeName[] {
  const allowed: readonly string[] = tenant.kind === 'utility' ? UTILITY_WEBHOOK_KINDS : INTEGRATOR_WEBHOOK_KINDS;
  const wrong = eventTypes.map((t, i) => ({ t, i })).filter(({ t }) => !allowed.includes(t));
  if (wrong.length > 0) {
    throw Errors.VALIDATION_ERROR.forFields(
      `Not a kind ${tenant.kind === 'utility' ? 'a utility' : 'an integrator'} receives: ${wrong.map((w) => w.t).join(', ')}`,
      wrong.map(({ t, i }) => ({ path: ['event_types', i], msg: `${t} is not delivered to ${tenant.kind === 'utility' ? 'utilities' : 'integrators'} (one of ${allowed.join(', ')})` })),
    );
  }
  return [...new Set(eventTypes)];
}
