import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { missingSiteFields } from '@efs/api/siteRules';
import type { EnrollmentType, ProgramType } from '@efs/api';
import type { PortalApi } from '../api.ts';
import { isCurrent } from '../enrollments.ts';
import { EnrollmentsSection } from './Enrollments.tsx';
import { EventsSection } from './Events.tsx';
import { ProgramsSection } from './Programs.tsx';
import { SiteSection } from './SiteSection.tsx';
import { useResource } from './useResource.ts';

/** Every enrollment of the site, current and past (the default list may hold only current ones). */
async function allEnrollments(api: PortalApi): Promise<EnrollmentType[]> {
  const lists = await Promise.all([api.enrollments(), api.enrollments('UNENROLLED'), api.enrollments('REJECTED')]);
  const byId = new Map<string, EnrollmentType>();
  for (const e of lists.flat()) byId.set(e.id, e);
  return [...byId.values()];
}

/** The portal of one site: its enrollments, the programs it can join, its events and its details. */
export function Portal({ api }: { api: PortalApi }) {
  const site = useResource(api.site);
  const devices = useResource(api.devices);
  const enrollments = useResource(() => allEnrollments(api));
  const programs = useResource(api.programs);
  const events = useResource(api.events);
  const [notice, setNotice] = useState('');
  const [extraPrograms, setExtraPrograms] = useState<Map<string, ProgramType>>(new Map());
  const [editSite, setEditSite] = useState(0);
  const askedPrograms = useRef(new Set<string>());

  // Enrollments and events may name programs the site is no longer eligible for: read those once.
  const programIndex = useMemo(() => {
    const m = new Map(extraPrograms);
    for (const p of programs.data ?? []) m.set(p.id, p);
    return m;
  }, [programs.data, extraPrograms]);
  useEffect(() => {
    const wanted = new Set([...(enrollments.data ?? []).map((e) => e.program_id), ...(events.data ?? []).map((e) => e.program_id)]);
    const missing = [...wanted].filter((id) => !programIndex.has(id) && !askedPrograms.current.has(id));
    if (missing.length === 0 || programs.loading) return;
    for (const id of missing) askedPrograms.current.add(id);
    void Promise.allSettled(missing.map((id) => api.program(id))).then((results) => {
      const found = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (found.length > 0) setExtraPrograms((prev) => new Map([...prev, ...found.map((p) => [p.id, p] as const)]));
    });
  }, [enrollments.data, events.data, programIndex, programs.loading, api]);

  // A pending enrollment is decided by the utility: look again, less and less often, until it is.
  const pending = (enrollments.data ?? []).some((e) => e.status === 'PENDING');
  const [pollRound, setPollRound] = useState(0);
  useEffect(() => {
    if (!pending) {
      setPollRound(0);
      return;
    }
    const t = setTimeout(() => void enrollments.reload().then(() => setPollRound((n) => n + 1)), Math.min(60_000, 5_000 * 2 ** Math.min(pollRound, 4)));
    return () => clearTimeout(t);
  }, [pending, pollRound, enrollments.reload]);

  const complete = site.data ? missingSiteFields(site.data).length === 0 : true;
  const onSiteSaved = (message: string) => {
    setNotice(message);
    void programs.reload();
    void enrollments.reload();
  };
  const askForSite = () => {
    setEditSite((n) => n + 1);
    document.getElementById('site-title')?.scrollIntoView({ block: 'start' });
  };

  const siteSection = <SiteSection key="site" api={api} site={site} editRequest={editSite} onSaved={onSiteSaved} />;
  const rest = [
    <EnrollmentsSection key="enrollments" api={api} enrollments={enrollments} programs={programIndex} devices={devices.data ?? []} onChanged={setNotice} />,
    <ProgramsSection
      key="programs"
      api={api}
      programs={programs}
      devices={devices}
      enrollments={(enrollments.data ?? []).filter(isCurrent)}
      siteComplete={complete}
      onEnrolled={(message) => {
        setNotice(message);
        void enrollments.reload();
      }}
      onNeedSite={askForSite}
    />,
    <EventsSection key="events" api={api} events={events} programs={programIndex} onChanged={setNotice} />,
  ];
  return (
    <>
      <div class="notice" role="status" aria-live="polite">
        {notice ? <p>{notice}</p> : null}
      </div>
      {complete ? [...rest, siteSection] : [siteSection, ...rest]}
    </>
  );
}
