import type { Topic } from '@efs/contracts';
import type { Logger } from '@efs/logging';
import { FreshLookup, TopicProgress, type PartitionEnd } from '../topicProgress.ts';
import type { EndOffsets } from './endOffsets.ts';

/** The progress of `inMemory` subscriptions through their topics, and whether they have caught up with the topics' ends. */
export class InMemoryProgress {
  /** The progress of each `inMemory` subscription, by topic name and the group name it was given. */
  private readonly inMemory = new Map<string, TopicProgress>();
  /** Each topic's end offsets, looked up once for every caughtUp waiting at the moment. */
  private readonly endLookups = new Map<string, FreshLookup<PartitionEnd[]>>();
  private readonly endOffsets: EndOffsets;
  private readonly log: Logger;
  private readonly prefix: string;

  constructor(deps: { endOffsets: EndOffsets; log: Logger; prefix: string }) {
    this.endOffsets = deps.endOffsets;
    this.log = deps.log;
    this.prefix = deps.prefix;
  }

  track(topic: Topic, group: string): TopicProgress {
    const id = `${topic.name}\u0000${group}`;
    if (this.inMemory.has(id)) throw new Error(`group ${group} already subscribed to ${topic.name}`);
    const progress = new TopicProgress();
    this.inMemory.set(id, progress);
    return progress;
  }

  async caughtUp(topic: Topic, group: string, options: { timeoutMs: number }): Promise<boolean> {
    const progress = this.inMemory.get(`${topic.name}\u0000${group}`);
    if (!progress) throw new Error(`caughtUp needs an inMemory subscription; ${group} has none to ${topic.name}`);
    const name = this.prefix + topic.name;
    const deadline = Date.now() + options.timeoutMs;
    let lookup = this.endLookups.get(name);
    if (!lookup) {
      lookup = new FreshLookup(() => this.endOffsets.of(name));
      this.endLookups.set(name, lookup);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(1, options.timeoutMs))));
    try {
      const ends = await Promise.race([lookup.next(), late]);
      if (!ends) return false;
      return await progress.waitFor(ends, deadline - Date.now());
    } catch (err) {
      this.log.debug({ err, topic: name }, 'end offsets of the topic unknown; not caught up');
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
