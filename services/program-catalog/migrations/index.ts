import type { Migration } from '@efs/db';
import { programs } from './20261122000000_programs.ts';

export const migrations: readonly Migration[] = [programs];
