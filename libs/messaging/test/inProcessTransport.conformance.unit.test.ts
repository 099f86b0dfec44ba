import { createLogger } from '@efs/logging';
import { InProcessTransport } from '@efs/messaging';
import { fromDeadLetterHeaders, transportConformance } from './transportConformance.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

transportConformance(
  'in-process',
  async () => {
    const t = new InProcessTransport({ logger, retryBaseDelayMs: 1 });
    await t.start();
    return { server: t, caller: t, deadLetters: async () => t.deadLetters.map((d) => fromDeadLetterHeaders(d.headers)), close: () => t.stop() };
  },
  { waitMs: 5000, deadlineMs: 100, requestsInOrderPerKey: false },
);
