import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { missingSiteFields } from '@efs/api/siteRules';
import type { ProgramType } from '@efs/api';
import type { PortalApi } from '../api.ts';
import { isCurrent } from '../enrollments.ts';
import { createQueryClient } from '../queryClient.ts';
import { siteQueries, type SiteQueries } from '../siteQueries.ts';
import { EnrollmentsSection } from './Enrollments.tsx';
import { EventsSection } from './Events.tsx';
import { ProgramsSection } from './Programs.tsx';
import { SiteSection } from './SiteSection.tsx';
import { useQuery } from './useQuery.ts';

/**
 * The portal of one site: its enrollments, the programs it can join, its events and its details,
 * kept current while it is open (queryClient.ts) and read again after every change the user makes.
 */
export function Portal({ api }: { api: PortalApi }) {
  const [client] = useState(createQueryClient);
  const queries = useMemo(() => siteQueries(api), [api]);
  useEffect(() => {
    client.mount();
    return () => {
      client.unmount();
      client.clear();
    };
  }, [client]);
  const site = useQuery(client, queries.site);
  const devices = useQuery(client, queries.devices);
  const enrollments = useQuery(client, queries.enrollments);
  const programs = useQuery(client, queries.programs);
  const events = useQuery(client, queries.events);
  const [notice, setNotice] = useState('');
  const [extraPrograms, setExtraPrograms] = useState<Map<string, ProgramType>>(new Map());
  const [editSite, setEditSite] = useState(0);
  const askedPrograms = useRef(new Set<string>());

  /** After a change: reads again what it touched, then says what happened. */
  const changed = (affected: (keyof SiteQueries)[]) => async (message: string) => {
    await Promise.all(affected.map((q) => client.invalidateQueries({ queryKey: queries[q].queryKey })));
    setNotice(message);
  };

  // Enrollments and events may name programs the site is no longer eligible for: read those once.
  const programIndex = useMemo(() => {
    const m = new Map(extraPrograms);
    for (const p of programs.data ?? []) m.set(p.id, p);
    return m;
  }, [programs.data, extraPrograms]);
  useEffect(() => {
    const wanted = new Set([...(enrollments.data ?? []).map((e) => e.program_id), ...(events.data ?? []).map((e) => e.program_id)]);
    const missing = [...wanted].filter((id) => !programIndex.has(id) && !askedPrograms.current.has(id));
    if (missing.length === 0 || programs.isFetching) return;
    for (const id of missing) askedPrograms.current.add(id);
    void Promise.allSettled(missing.map((id) => api.program(id))).then((results) => {
      const found = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (found.length > 0) setExtraPrograms((prev) => new Map([...prev, ...found.map((p) => [p.id, p] as const)]));
    });
  }, [enrollments.data, events.data, programIndex, programs.isFetching, api]);

  const complete = site.data ? missingSiteFields(site.data).length === 0 : true;
  const askForSite = () => {
    setEditSite((n) => n + 1);
    document.getElementById('site-title')?.scrollIntoView({ block: 'start' });
  };

  // A saved address changes which programs the site can join, and may settle what an enrollment waited for.
  const siteSection = <SiteSection key="site" api={api} site={site} editRequest={editSite} onSaved={changed(['site', 'programs', 'enrollments'])} />;
  const rest = [
    <EnrollmentsSection key="enrollments" api={api} enrollments={enrollments} programs={programIndex} devices={devices.data ?? []} onChanged={changed(['enrollments', 'events'])} />,
    <ProgramsSection
      key="programs"
      api={api}
      programs={programs}
      devices={devices}
      enrollments={(enrollments.data ?? []).filter(isCurrent)}
      siteComplete={complete}
      onEnrolled={changed(['enrollments'])}
      onNeedSite={askForSite}
    />,
    <EventsSection key="events" api={api} events={events} programs={programIndex} onChanged={changed(['events'])} />,
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
