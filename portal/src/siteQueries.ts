import type { DeviceRecordType, EnrollmentType, ProgramType, SiteEventType, SiteRecordType } from '@efs/api';
import { ApiError, type PortalApi } from './api.ts';
import type { QueryDefinition } from './components/useQuery.ts';

/** Every enrollment of the site, current and past (the default list may hold only current ones). */
async function allEnrollments(api: PortalApi): Promise<EnrollmentType[]> {
  const lists = await Promise.all([api.enrollments(), api.enrollments('UNENROLLED'), api.enrollments('REJECTED')]);
  const byId = new Map<string, EnrollmentType>();
  for (const e of lists.flat()) byId.set(e.id, e);
  return [...byId.values()];
}

/** A read whose failures are all ApiErrors, as the components expect (anything else is unforeseen). */
const read =
  <T>(load: () => Promise<T>) =>
  (): Promise<T> =>
    load().catch((err: unknown) => {
      throw err instanceof ApiError ? err : new ApiError(0, { code: 'ERROR', message: 'Something went wrong. Try again.', status_code: 0, detail: [], errors: [] });
    });

export interface SiteQueries {
  site: QueryDefinition<SiteRecordType>;
  devices: QueryDefinition<DeviceRecordType[]>;
  enrollments: QueryDefinition<EnrollmentType[]>;
  programs: QueryDefinition<ProgramType[]>;
  events: QueryDefinition<SiteEventType[]>;
}

/** What the portal of one site reads, each under the key a change invalidates. */
export function siteQueries(api: PortalApi): SiteQueries {
  const key = (what: keyof SiteQueries) => ['site', api.siteId, what];
  return {
    site: { queryKey: key('site'), queryFn: read(() => api.site()) },
    devices: { queryKey: key('devices'), queryFn: read(() => api.devices()) },
    enrollments: { queryKey: key('enrollments'), queryFn: read(() => allEnrollments(api)) },
    programs: { queryKey: key('programs'), queryFn: read(() => api.programs()) },
    events: { queryKey: key('events'), queryFn: read(() => api.events()) },
  };
}
