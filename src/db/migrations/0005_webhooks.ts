import { idType, type MigrationStep } from './types.js';

/** Webhook subscriptions and the record of every delivery attempt. */
export const webhooksMigration: MigrationStep = async (db, dialect) => {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', idType(dialect))
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('signing_secret', 'text')
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('created_us', 'bigint', (c) => c.notNull())
    .addColumn('updated_us', 'bigint', (c) => c.notNull())
    .execute();
  // The spec's rule "target_url unique per project and event", enforced by the store itself.
  await db.schema.createIndex('webhooks_project_event_target').on('webhooks').columns(['project_id', 'event', 'target_url']).unique().execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', idType(dialect))
    .addColumn('webhook_id', 'bigint', (c) => c.notNull())
    .addColumn('project_id', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    /** Id of the event.file job: one event, many attempts. */
    .addColumn('event_id', 'bigint', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull())
    .addColumn('started_us', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('success', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('webhook_deliveries_hook').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_started').on('webhook_deliveries').column('started_us').execute();
};
