import { createLogger } from '@efs/logging';
import { ProgramsTopic } from '@efs/contracts';
import { InProcessTransport } from '@efs/messaging';
import { fromDeadLetterHeaders, transportConformance } from './transportConformance.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

transportConformance(
  'in-process',
  async () => {
    const t = new InProcessTransport({ logger, retryBaseDelayMs: 1 });
    await t.start();
    return {
      server: t,
      caller: t,
      deadLetters: async () => t.deadLetters.map((d) => fromDeadLetterHeaders(d.headers)),
      // Acknowledged here means handled by every consumer group: one that does not finish withholds it.
      unacknowledged: async () => {
        let open!: () => void;
        const gate = new Promise<void>((r) => (open = r));
        await t.subscribe(ProgramsTopic, 'stuck', () => gate);
        return { publisher: t, release: async () => open() };
      },
      close: () => t.stop(),
    };
  },
  { waitMs: 5000, deadlineMs: 100 },
);
