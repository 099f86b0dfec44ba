import type { ProgramGroupType } from '@efs/api';
import type { ProgramGroupMessage } from '@efs/contracts';

/** A named group of a program's enrollments, which events can target. */
export interface ProgramGroup {
  program_id: string;
  id: string;
  utility_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

/** A group as the utility API answers it. */
export const toApiGroup = (g: ProgramGroup): ProgramGroupType => ({
  id: g.id,
  program_id: g.program_id,
  name: g.name,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
});

/** A group as announced on the groups topic; `deleted` marks its removal. */
export const toGroupMessage = (g: ProgramGroup, deleted: boolean): ProgramGroupMessage => ({
  program_id: g.program_id,
  id: g.id,
  utility_id: g.utility_id,
  name: g.name,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
  deleted,
});
