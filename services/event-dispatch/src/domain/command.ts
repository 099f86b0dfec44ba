import type { CommandStatusType, CommandType, DeviceStatusType, EventModeType, PowerModeType } from '@efs/api';
import type { CommandMessage } from '@efs/contracts';
import type { ReserveSource } from './reserve.ts';

/** SCHEDULED until `starts_at`, STARTED until `ends_at`, then ENDED; announced as command.started / command.ended. */
export type CommandPhase = 'SCHEDULED' | 'STARTED' | 'ENDED';

/** A command as the service keeps it. */
export interface Command {
  id: string;
  event_id: string;
  action_index: number;
  utility_id: string;
  program_id: string;
  integrator_id: string;
  site_id: string;
  device_id: string;
  starts_at: Date;
  ends_at: Date;
  mode: EventModeType;
  power_mode: PowerModeType | null;
  setpoint_w: number | null;
  enable_grid_import: boolean;
  action_reserve_percentage: number | null;
  user_reserve_percentage: number | null;
  backup_reserve_percentage: number;
  reserve_source: ReserveSource;
  status: CommandStatusType;
  opted_out: boolean;
  device_status: DeviceStatusType;
  device_status_reason: string | null;
  phase: CommandPhase;
  phase_due_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type CommandChange = CommandMessage['change'];

/**
 * A command's status: CANCELED stays canceled (event canceled, device removed); otherwise OPT_OUT
 * when the site left the event or the user left this one command, else OK.
 */
export function commandStatus(c: { status: CommandStatusType; opted_out: boolean }, siteParticipating: boolean): CommandStatusType {
  if (c.status === 'CANCELED') return 'CANCELED';
  return !siteParticipating || c.opted_out ? 'OPT_OUT' : 'OK';
}

/** When the command's next phase is due; only a command that will run (OK) is announced. */
export function phaseDueAt(c: { status: CommandStatusType; phase: CommandPhase; starts_at: Date; ends_at: Date }): Date | null {
  if (c.status !== 'OK') return null;
  if (c.phase === 'SCHEDULED') return c.starts_at;
  if (c.phase === 'STARTED') return c.ends_at;
  return null;
}

/** The phases a command passes through by `now`, in order (a late scheduler announces both). */
export function duePhases(c: { phase: CommandPhase; starts_at: Date; ends_at: Date }, now: Date): CommandPhase[] {
  const out: CommandPhase[] = [];
  let phase = c.phase;
  if (phase === 'SCHEDULED' && c.starts_at.getTime() <= now.getTime()) out.push((phase = 'STARTED'));
  if (phase === 'STARTED' && c.ends_at.getTime() <= now.getTime()) out.push('ENDED');
  return out;
}

/** A command has ended once its end has passed: participation and reserve changes leave it as it ran. */
export const hasEnded = (c: { ends_at: Date }, now: Date): boolean => c.ends_at.getTime() <= now.getTime();

const durationOf = (c: Pick<Command, 'starts_at' | 'ends_at'>) => Math.round((c.ends_at.getTime() - c.starts_at.getTime()) / 1000);

/** The command as the API shows it. */
export function toApiCommand(c: Command): CommandType {
  return {
    id: c.id,
    event_id: c.event_id,
    device_id: c.device_id,
    site_id: c.site_id,
    starts_at: c.starts_at.toISOString(),
    ends_at: c.ends_at.toISOString(),
    duration_s: durationOf(c),
    battery_commands: {
      mode: c.mode,
      power_mode: c.power_mode,
      setpoint_w: c.setpoint_w,
      backup_reserve_percentage: c.backup_reserve_percentage,
      enable_grid_import: c.enable_grid_import,
    },
    status: c.status,
    device_status: c.device_status,
    device_status_reason: c.device_status_reason,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

/** The command as announced on the commands topic: the API's view, its tenancy and what happened. */
export function toCommandMessage(c: Command, change: CommandChange): CommandMessage {
  return { change, ...toApiCommand(c), integrator_id: c.integrator_id, utility_id: c.utility_id, program_id: c.program_id };
}
