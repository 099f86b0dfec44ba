/**
 * The bare reference of the benchmark: a plain Fastify (no logger, no auth, no validation, no
 * messaging) answering GET /v1/programs with the body the real system answered, and
 * POST /v1/commission (after parsing the JSON body, as any handler must) with the real system's
 * commission answer. Run as its own process by bench/run.ts, which measures its CPU.
 *
 *   node bench/bareServer.ts PORT BODIES.json      BODIES: {"programs": ..., "commissionAnswer": {"status": n, "body": ...}}
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [port, bodiesFile] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(bodiesFile!, 'utf8')) as { programs: unknown; commissionAnswer: { status: number; body: unknown } };

const app = Fastify();
app.get('/v1/programs', async () => bodies.programs);
app.post('/v1/commission', async (_req, reply) => reply.code(bodies.commissionAnswer.status).send(bodies.commissionAnswer.body));
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('listening\n');
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void app.close().then(() => process.exit(0)));
