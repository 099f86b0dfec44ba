import { outboxRelayMigration, type Migration } from '@efs/db';
import { programs } from './20261122000000_programs.ts';
import { siteReadModel } from './20261122000100_site_read_model.ts';
import { siteViewCreatedAt } from './20261122000200_site_view_created_at.ts';

export const migrations: readonly Migration[] = [programs, siteReadModel, siteViewCreatedAt, outboxRelayMigration];
