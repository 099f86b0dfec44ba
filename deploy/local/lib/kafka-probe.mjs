// Readiness probe for a Kafka broker, no dependencies (plain node:net).
// Sends a Metadata v4 request (supported by Kafka 2.x .. 4.x; KIP-896 only
// removed v0-v3) for zero topics and succeeds when the broker answers with at
// least one live broker and a known active controller, i.e. it really serves
// metadata, not just accepts TCP connections.
// Usage: node kafka-probe.mjs HOST PORT [TIMEOUT_MS]  -> exit 0 ready, 1 not ready.
import net from 'node:net';

const [host = '127.0.0.1', port = '9092', timeoutMs = '3000'] = process.argv.slice(2);

function request() {
  const clientId = Buffer.from('efs-probe');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 1);
  let o = 0;
  o = body.writeInt16BE(3, o);          // api_key = Metadata
  o = body.writeInt16BE(4, o);          // api_version = 4
  o = body.writeInt32BE(4711, o);       // correlation_id
  o = body.writeInt16BE(clientId.length, o);
  o += clientId.copy(body, o);
  o = body.writeInt32BE(0, o);          // topics: empty array (no topic data)
  body.writeInt8(0, o);                 // allow_auto_topic_creation = false
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

function parse(buf) {
  let o = 0;
  const i16 = () => { const v = buf.readInt16BE(o); o += 2; return v; };
  const i32 = () => { const v = buf.readInt32BE(o); o += 4; return v; };
  const str = () => { const n = i16(); if (n < 0) return null; const s = buf.toString('utf8', o, o + n); o += n; return s; };
  const corr = i32();
  if (corr !== 4711) throw new Error(`unexpected correlation id ${corr}`);
  i32(); // throttle_time_ms
  const brokers = [];
  for (let n = i32(), k = 0; k < n; k++) brokers.push({ id: i32(), host: str(), port: i32(), rack: str() });
  const clusterId = str();
  const controllerId = i32();
  return { brokers, clusterId, controllerId };
}

const sock = net.connect({ host, port: Number(port) });
let chunks = Buffer.alloc(0);
const fail = (msg) => { console.error(`not ready: ${msg}`); sock.destroy(); process.exit(1); };
sock.setTimeout(Number(timeoutMs), () => fail('timeout'));
sock.on('error', (e) => fail(e.code || e.message));
sock.on('connect', () => sock.write(request()));
sock.on('data', (d) => {
  chunks = Buffer.concat([chunks, d]);
  if (chunks.length < 4) return;
  const len = chunks.readInt32BE(0);
  if (chunks.length < 4 + len) return;
  let md;
  try { md = parse(chunks.subarray(4, 4 + len)); } catch (e) { fail(`bad response: ${e.message}`); }
  sock.end();
  if (md.brokers.length === 0) fail('no live brokers in metadata yet');
  if (md.controllerId < 0) fail('no active controller yet');
  const b = md.brokers.map((x) => `${x.id}@${x.host}:${x.port}`).join(',');
  console.log(`ready: cluster=${md.clusterId} controller=${md.controllerId} brokers=${b}`);
  process.exit(0);
});
