import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ProgramsTopic } from '@efs/contracts';
import { DependencyUnavailableError, isDependencyUnavailable } from '@efs/errors';
import { RegistryCodec } from '@efs/messaging';

/** A loopback port nobody listens on (taken, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('the registry codec when the registry cannot be reached', () => {
  it('says a message it cannot decode for want of the registry is a dependency outage, and undecodable bytes are not', async () => {
    const codec = new RegistryCodec(`http://127.0.0.1:${await closedPort()}/apis/ccompat/v7`);
    // Confluent framing: magic byte 0, a schema id this process has never fetched, then Avro bytes.
    const err = await codec.decode(ProgramsTopic, Buffer.from([0, 0, 0, 0, 42, 2, 97])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyUnavailableError);
    expect(isDependencyUnavailable(err)).toBe(true);
    const garbage = await codec.decode(ProgramsTopic, Buffer.from('not avro')).catch((e: unknown) => e);
    expect(garbage).toBeInstanceOf(Error);
    expect(isDependencyUnavailable(garbage)).toBe(false);
  });
});
