import type { ProgramGroupType } from '@efs/api';
import type { ProgramGroup } from '../store/groupStore.ts';

export const toApiGroup = (g: ProgramGroup): ProgramGroupType => ({
  id: g.id,
  program_id: g.program_id,
  name: g.name,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
});
