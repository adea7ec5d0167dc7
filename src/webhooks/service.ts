/**
 * Webhook subscriptions as the REST routes see them: a project's subscriptions and the record of
 * their delivery attempts. A second subscription of the same project, event and target is
 * "duplicate", not an error: the routes answer it with the wire's 400.
 */
import { isUniqueViolation } from '../db/errors.js';
import { nowUs } from '../core/time.js';
import type { DeliveryRecord, Subscription, SubscriptionPatch, WebhookRepo } from './repo.js';

export type NewSubscription = Omit<Subscription, 'id' | 'projectId' | 'createdUs' | 'updatedUs'>;

export class WebhookService {
  constructor(private readonly repo: WebhookRepo) {}

  list(projectId: number): Promise<Subscription[]> {
    return this.repo.list(projectId);
  }

  get(projectId: number, id: number): Promise<Subscription | null> {
    return this.repo.get(projectId, id);
  }

  async subscribe(projectId: number, s: NewSubscription): Promise<Subscription | 'duplicate'> {
    const t = nowUs();
    return duplicateAware(() => this.repo.insert({ projectId, ...s, createdUs: t, updatedUs: t }));
  }

  /** null when the project has no such subscription. */
  update(projectId: number, id: number, patch: SubscriptionPatch): Promise<Subscription | null | 'duplicate'> {
    return duplicateAware(() => this.repo.update(projectId, id, patch, nowUs()));
  }

  /** Unsubscribe: by target and event, or every event of the target when `event` is absent. */
  unsubscribe(projectId: number, targetUrl: string, event: string | undefined): Promise<number> {
    return this.repo.removeByTarget(projectId, targetUrl, event);
  }

  /** Removes the subscription and its attempt records; false when there was none. */
  async remove(projectId: number, id: number): Promise<boolean> {
    if (!(await this.repo.remove(projectId, id))) return false;
    await this.repo.removeDeliveries(id);
    return true;
  }

  /** One page of attempts, newest first (`beforeId` continues a page), and how many there are. */
  async deliveries(webhookId: number, limit: number, beforeId: number | null): Promise<{ rows: DeliveryRecord[]; total: number }> {
    const [rows, total] = await Promise.all([this.repo.deliveries(webhookId, limit, beforeId), this.repo.countDeliveries(webhookId)]);
    return { rows, total };
  }
}

async function duplicateAware<T>(write: () => Promise<T>): Promise<T | 'duplicate'> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) return 'duplicate';
    throw err;
  }
}
