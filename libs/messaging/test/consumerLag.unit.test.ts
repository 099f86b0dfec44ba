import { describe, expect, it } from 'vitest';
import type { KafkaMessage } from 'kafkajs';
import { partitionLag } from '../src/kafka/consumerLag.ts';
import { FirstSeen } from '../src/kafka/firstSeen.ts';
import { PartitionPositions } from '../src/kafka/partitionPositions.ts';

const message = (offset: number, timestamp: number) => ({ offset: String(offset), timestamp: String(timestamp) }) as KafkaMessage;

describe('FirstSeen', () => {
  it('answers the first read whose end was above an offset, and nothing for an offset no read saw', () => {
    const seen = new FirstSeen();
    seen.saw(10, 1000);
    seen.saw(10, 2000); // no new record: the first read stays
    seen.saw(25, 3000);
    expect(seen.since(5)).toBe(1000);
    expect(seen.since(10)).toBe(3000);
    expect(seen.since(24)).toBe(3000);
    expect(seen.since(25)).toBeUndefined();
  });

  it('keeps its oldest read when it holds too many', () => {
    const seen = new FirstSeen();
    for (let i = 1; i <= 200; i++) seen.saw(i, i * 1000);
    expect(seen.since(0)).toBe(1000);
  });
});

describe('PartitionPositions', () => {
  it('follows the resolved offsets of a batch and the record held, for the partitions assigned', () => {
    const positions = new PartitionPositions();
    positions.joined([0, 1], new Map([[1, '40']]));
    expect(positions.assigned.get(0)!.next).toBeUndefined();
    expect(positions.assigned.get(1)!.next).toBe(40);
    const progress = positions.batch({ partition: 0, messages: [message(7, 100), message(8, 200), message(9, 300)] });
    expect(positions.assigned.get(0)).toMatchObject({ next: 7, heldTimestamp: 100 });
    progress.resolved('8');
    expect(positions.assigned.get(0)).toMatchObject({ next: 9, heldTimestamp: 300 });
    progress.resolved('9');
    expect(positions.assigned.get(0)).toMatchObject({ next: 10, heldTimestamp: undefined });
    progress.ended();
    // A partition taken away at a rebalance: its batch changes nothing.
    positions.left();
    positions.batch({ partition: 0, messages: [message(10, 400)] }).resolved('10');
    expect(positions.assigned.size).toBe(0);
  });
});

describe('partitionLag', () => {
  const assigned = (next?: number) => {
    const positions = new PartitionPositions();
    positions.joined([0], next === undefined ? new Map() : new Map([[0, String(next)]]));
    return positions;
  };

  it('is the end minus the further of the member\'s position and the committed offset', () => {
    expect(partitionLag(assigned(90).assigned.get(0)!, 100, 95, 0, 0)?.lag).toBe(5);
    expect(partitionLag(assigned(97).assigned.get(0)!, 100, 95, 0, 0)?.lag).toBe(3);
    expect(partitionLag(assigned().assigned.get(0)!, 100, 60, 0, 0)?.lag).toBe(40);
    // Nothing committed (-1) and nothing handled since the join: unknown, not guessed.
    expect(partitionLag(assigned().assigned.get(0)!, 100, -1, 0, 0)).toBeUndefined();
    // An end read before the member moved past it.
    expect(partitionLag(assigned(120).assigned.get(0)!, 100, undefined, 0, 0)).toEqual({ lag: 0, ageSeconds: 0 });
  });

  it('ages a record the member holds by its timestamp, and one not fetched yet by when a read first saw it', () => {
    const positions = assigned(0);
    const p = positions.assigned.get(0)!;
    // Three records written; a read at t=10 s sees them; the consumer has fetched none.
    expect(partitionLag(p, 3, undefined, 10_000, 10_000)).toEqual({ lag: 3, ageSeconds: 0 });
    expect(partitionLag(p, 3, undefined, 10_000, 70_000)).toEqual({ lag: 3, ageSeconds: 60 });
    // It fetches them (written at t=1 s, 2 s, 3 s) and is stuck on the first.
    const progress = positions.batch({ partition: 0, messages: [message(0, 1000), message(1, 2000), message(2, 3000)] });
    expect(partitionLag(p, 3, undefined, 10_000, 70_000)).toEqual({ lag: 3, ageSeconds: 69 });
    progress.resolved('1');
    expect(partitionLag(p, 3, undefined, 10_000, 70_000)).toEqual({ lag: 1, ageSeconds: 67 });
    progress.resolved('2');
    progress.ended();
    expect(partitionLag(p, 3, undefined, 10_000, 70_000)).toEqual({ lag: 0, ageSeconds: 0 });
    // A record written after the read at t=10 s: seen first by the read at t=80 s.
    expect(partitionLag(p, 4, undefined, 80_000, 95_000)).toEqual({ lag: 1, ageSeconds: 15 });
  });
});
